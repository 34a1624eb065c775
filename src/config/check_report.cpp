#include <algorithm>
#include <tuple>

#include <nlohmann/json.hpp>

#include "config/report.hpp"

namespace drover::config {

std::vector<Diagnostic> sorted_diagnostics(const Diagnostics& diags) {
  std::vector<Diagnostic> out = diags.items();
  std::stable_sort(out.begin(), out.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.loc.file, a.loc.line, a.loc.column, a.code, a.message) <
           std::tie(b.loc.file, b.loc.line, b.loc.column, b.code, b.message);
  });
  return out;
}

namespace {
std::string count_of(std::size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}
}  // namespace

std::string summary_line(const Diagnostics& diags) {
  std::string out = count_of(diags.count(Severity::kError), "error") + ", " +
                    count_of(diags.count(Severity::kWarning), "warning");
  if (std::size_t n = diags.count(Severity::kInfo)) out += ", " + std::to_string(n) + " info";
  return out;
}

int check_exit_status(const Diagnostics& diags) {
  if (diags.has_errors()) return 2;
  if (diags.has_warnings()) return 1;
  return 0;
}

std::string check_report_text(const Diagnostics& diags) {
  std::string out;
  for (const auto& d : sorted_diagnostics(diags)) out += d.format() + "\n";
  return out + summary_line(diags) + "\n";
}

namespace {
nlohmann::json loc_json(const SourceLoc& loc) {
  return {{"file", loc.file}, {"line", loc.line}, {"column", loc.column}};
}
}  // namespace

std::string check_report_json(const Diagnostics& diags, const std::string& config_path,
                              const std::vector<std::string>& files_read) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& d : sorted_diagnostics(diags)) {
    nlohmann::json related = nlohmann::json::array();
    for (const auto& r : d.related) related.push_back(loc_json(r));
    findings.push_back({{"severity", severity_name(d.severity)},
                        {"code", d.code},
                        {"file", d.loc.file},
                        {"line", d.loc.line},
                        {"column", d.loc.column},
                        {"key", d.key},
                        {"message", d.message},
                        {"fix", d.fix},
                        {"related", related}});
  }
  nlohmann::json doc = {
      {"config", config_path},
      {"files_read", files_read},
      {"summary",
       {{"errors", diags.count(Severity::kError)},
        {"warnings", diags.count(Severity::kWarning)},
        {"info", diags.count(Severity::kInfo)}}},
      {"findings", findings},
  };
  // Invalid UTF-8 in a user's file must not abort the report: replace it.
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace drover::config
