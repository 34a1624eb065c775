// Presenting a configuration: the diagnostics report of `drover config
// check` (text and JSON), the effective configuration of `drover config
// show`, and the generated reference (docs/config-reference.md).
#pragma once

#include <string>
#include <vector>

#include "common/diagnostic.hpp"
#include "config/model.hpp"

namespace drover::config {

// Deterministic order: file, line, column, code, then message.
std::vector<Diagnostic> sorted_diagnostics(const Diagnostics& diags);

// "2 errors, 3 warnings" (plus ", N info" when there are info findings).
std::string summary_line(const Diagnostics& diags);

// 0 clean (info only), 1 warnings only, 2 errors.
int check_exit_status(const Diagnostics& diags);

// The check report as text: every finding formatted, then the summary line.
std::string check_report_text(const Diagnostics& diags);

// The check report as a JSON document: {"config", "files_read", "summary":
// {"errors","warnings","info"}, "findings": [{severity, code, file, line,
// column, key, message, fix, related: [{file, line, column}]}]}.
std::string check_report_json(const Diagnostics& diags, const std::string& config_path,
                              const std::vector<std::string>& files_read);

// `drover config show`: globals as "Key = value" lines, then nodes,
// partitions, gres.conf lines and QOS in config-file syntax.
std::string show_config(const ClusterConfig& cfg);

// docs/config-reference.md, generated from the key tables.
std::string config_reference_markdown();

}  // namespace drover::config
