#include "common/diagnostic.hpp"

#include <algorithm>

namespace drover {

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kError: return "error";
  }
  return "error";
}

std::string SourceLoc::str() const {
  if (file.empty()) return {};
  std::string out = file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  return out;
}

std::string Diagnostic::format() const {
  std::string out;
  if (loc.known()) out += loc.str() + ": ";
  out += severity_name(severity);
  out += ": ";
  out += message;
  if (!code.empty()) out += " [" + code + "]";
  for (const auto& r : related) {
    if (r.known()) out += "\n    see: " + r.str();
  }
  if (!fix.empty()) out += "\n    fix: " + fix;
  return out;
}

Diagnostic& Diagnostics::add(Severity sev, std::string code, SourceLoc loc, std::string key,
                             std::string message, std::string fix) {
  items_.push_back(Diagnostic{sev, std::move(code), std::move(loc), std::move(key),
                              std::move(message), std::move(fix), {}});
  return items_.back();
}

void Diagnostics::append(const Diagnostics& other) {
  items_.insert(items_.end(), other.items_.begin(), other.items_.end());
}

bool Diagnostics::has_errors() const { return count(Severity::kError) > 0; }
bool Diagnostics::has_warnings() const { return count(Severity::kWarning) > 0; }

std::size_t Diagnostics::count(Severity s) const {
  return static_cast<std::size_t>(
      std::count_if(items_.begin(), items_.end(), [s](const Diagnostic& d) { return d.severity == s; }));
}

}  // namespace drover
