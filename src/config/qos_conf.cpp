// qos.conf, the seed's format (not a Slurm file): one QOS per line,
// "Name=normal GrpTRES=cpu=16000,gres/gpu=256 Priority=1000", with sacctmgr's
// option names. Drover loads QOS from it until sacctmgr manages them.
#include "common/strings.hpp"
#include "config/lexer.hpp"
#include "config/line_apply.hpp"
#include "config/parse.hpp"
#include "config/tables.hpp"

namespace drover::config {
namespace {

const char* const kWhere = "in qos.conf";

std::optional<OtherSection> no_other(std::string_view) { return std::nullopt; }

void handle_line(const LogicalLine& line, ClusterConfig& cfg, PassiveSeen& passive) {
  QosConfig q;
  q.loc = line.loc;
  std::set<std::string> seen;
  const Word* name_word = nullptr;
  for (const auto& w : line.words) {
    const KeyDef<QosConfig>* def = nullptr;
    if (apply_word(qos_keys(), q, w, kWhere, seen, cfg.diags, passive, no_other, &def) != Applied::kStored) continue;
    q.key_locs[def->name] = w.key_loc;
    if (def->name == "Name") name_word = &w;
  }
  if (!name_word || name_word->value.empty()) {
    cfg.diags.add(Severity::kError, "missing-key", line.loc, "Name",
                  "qos.conf line has no Name= (the QOS it defines); it is ignored",
                  "start the line with Name=<qos name>");
    return;
  }
  q.name = name_word->value;
  if (const auto* first = cfg.find_qos(q.name)) {
    auto& d = cfg.diags.add(Severity::kError, "duplicate-qos", name_word->value_loc, "Name",
                            "QOS " + q.name + " is defined twice (first at " + first->loc.str() +
                                "); this line is ignored",
                            "merge the two lines into one");
    d.related.push_back(first->loc);
    return;
  }
  cfg.qos.push_back(std::move(q));
}

}  // namespace

void parse_qos_conf_text(std::string_view text, std::string_view file_name, ClusterConfig& cfg) {
  cfg.qos_conf_path = std::string(file_name);
  cfg.files_read.emplace_back(file_name);
  for_each_line(text, file_name, cfg.diags,
                [&cfg](const LogicalLine& line, PassiveSeen& passive) { handle_line(line, cfg, passive); });
}

Result<QosConfig> parse_qos_settings(const std::string& name, const std::map<std::string, std::string>& settings) {
  std::string line = "Name=" + name;
  for (const auto& [k, v] : settings) {
    line += " " + k + "=" + (v.find_first_of(" \t") != std::string::npos ? "\"" + v + "\"" : v);
  }
  ClusterConfig cfg;
  parse_qos_conf_text(line + "\n", "sacctmgr", cfg);
  for (const auto& d : cfg.diags.items()) {
    if (d.severity == Severity::kError) return make_error("QOS " + name + ": " + d.message);
  }
  if (cfg.qos.size() != 1) return make_error("QOS " + name + ": could not be read");
  return cfg.qos.front();
}

}  // namespace drover::config
