// Diagnostics: findings about a user's input (config files, options), each
// with a severity, a location (file:line:column), the key involved, what is
// wrong, and how to fix it. Parsers return them beside their model; the
// config doctor adds its own; the CLI prints them.
#pragma once

#include <string>
#include <vector>

namespace drover {

enum class Severity { kInfo, kWarning, kError };

const char* severity_name(Severity s);  // "info", "warning", "error"

struct SourceLoc {
  std::string file;  // path as given by the user (empty: not from a file)
  int line = 0;      // 1-based; 0 = unknown
  int column = 0;    // 1-based; 0 = unknown

  bool known() const { return !file.empty(); }
  std::string str() const;  // "file:line:col", "file:line", "file" or ""
};

struct Diagnostic {
  Severity severity = Severity::kError;
  std::string code;     // stable identifier, e.g. "gres-count-mismatch"
  SourceLoc loc;        // where the problem is
  std::string key;      // config key or option involved (may be empty)
  std::string message;  // what is wrong, naming the values involved
  std::string fix;      // what to do about it (may be empty)
  std::vector<SourceLoc> related;  // other locations involved (e.g. the other file)

  // "file:line:col: error: message [code]" plus indented "fix:" / "see:" lines.
  std::string format() const;
};

class Diagnostics {
 public:
  Diagnostic& add(Severity sev, std::string code, SourceLoc loc, std::string key,
                  std::string message, std::string fix = {});
  void append(const Diagnostics& other);
  const std::vector<Diagnostic>& items() const { return items_; }
  std::vector<Diagnostic>& items() { return items_; }
  bool has_errors() const;
  bool has_warnings() const;
  std::size_t count(Severity s) const;
  bool empty() const { return items_.empty(); }

 private:
  std::vector<Diagnostic> items_;
};

}  // namespace drover
