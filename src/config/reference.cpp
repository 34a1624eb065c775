// docs/config-reference.md, generated from the key tables (never by hand).
#include "common/strings.hpp"
#include "config/report.hpp"
#include "config/tables.hpp"

namespace drover::config {
namespace {

std::string cell(const std::string& s, const char* if_empty = "(none)") {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else out += c;
  }
  return out.empty() ? if_empty : out;
}

std::string code_list(const std::vector<PassiveKey>& keys) {
  std::string out;
  for (const auto& k : keys) out += (out.empty() ? "`" : ", `") + k.name + "`";
  return out;
}

template <class T>
std::string table_md(const std::string& title, const std::string& intro, const KeyTable<T>& table) {
  std::string out = "## " + title + "\n\n" + intro + "\n\n";
  out += "| Key | Also spelled | Values | Default | What Drover does with it |\n";
  out += "|---|---|---|---|---|\n";
  for (const auto& def : table.keys()) {
    out += "| `" + def.name + "` | " + cell(join(def.aliases, ", "), "") + " | " + cell(def.values) + " | " +
           cell(table.default_of(def)) + " | " + cell(def.doc) + (def.repeatable ? " May be repeated." : "") + " |\n";
  }
  std::vector<PassiveKey> none, daemons;
  for (const auto& p : table.passive()) (p.daemons.empty() ? none : daemons).push_back(p);
  if (!daemons.empty()) {
    out += "\nKept as written for the controller and the agents, which act on them:\n\n";
    for (const auto& p : daemons) out += "- `" + p.name + "`: " + p.daemons + "\n";
  }
  if (!none.empty()) {
    out += "\nAccepted with no effect in Drover (reported once per file as `key-no-effect` info): " +
           code_list(none) + ".\n";
  }
  return out + "\n";
}

const char* const kHeader =
    "# Drover configuration reference\n\n"
    "<!-- Generated from Drover's key tables (src/config/*_keys.cpp). Do not edit by hand:\n"
    "     regenerate with `build/bin/drover config reference > docs/config-reference.md`. -->\n\n"
    "Drover reads Slurm's `slurm.conf` (with `Include`) and `gres.conf`, and the seed's `qos.conf`.\n"
    "Keys are case-insensitive; `#` starts a comment; a line ending in `\\` continues on the next;\n"
    "a value with spaces is written in double quotes. Blanks may stand around `=` (`KillWait = 30`), as\n"
    "Slurm allows; after `Key= ` the next word is the value, even when it is another `Key=Value`\n"
    "(a warning, `spaced-value`). A key Drover does not know is a warning\n"
    "(`unknown-key`, naming the nearest known key); a key that belongs on another kind of line is a\n"
    "warning (`key-wrong-section`); a value that does not parse is an error (`bad-value`) at the\n"
    "value's file:line:column. Slurm keys Drover accepts without acting on are listed under each table.\n\n"
    "The configuration is found at `--config PATH`, else `$DROVER_CONF`, else `$SLURM_CONF`, else `/etc/drover/slurm.conf`;\n"
    "`gres.conf` and `qos.conf` are read from the same directory when present.\n\n";

}  // namespace

std::string config_reference_markdown() {
  std::string out = kHeader;
  out += table_md("slurm.conf: global keys", "One `Key=value` per word, outside NodeName/PartitionName lines. "
                  "`Include PATH` reads another file in place (`%c`: ClusterName; relative to the including file).",
                  global_keys());
  out += "Whole lines of these kinds are accepted with no effect: " + code_list(passive_line_kinds()) + ".\n\n";
  out += table_md("slurm.conf: SchedulerParameters items", "Comma-separated inside `SchedulerParameters=`; "
                  "an unknown item is a warning (`unknown-scheduler-parameter`).",
                  scheduler_parameter_keys());
  out += table_md("slurm.conf: NodeName lines", "`NodeName=gpu[01-32] ...` defines one node per name; "
                  "`NodeName=DEFAULT ...` sets defaults for the node lines after it.",
                  node_keys());
  out += table_md("slurm.conf: PartitionName lines", "`PartitionName=NAME ...`; `PartitionName=DEFAULT ...` "
                  "sets defaults for the partition lines after it.",
                  partition_keys());
  out += table_md("gres.conf", "One line per group of devices; a line with only `AutoDetect=` applies to "
                  "every line.", gres_keys());
  out += table_md("qos.conf (Drover's format, from the seed)", "One QOS per line, sacctmgr's option names: "
                  "`Name=normal GrpTRES=cpu=16000,gres/gpu=256 Priority=1000`.", qos_keys());
  return out;
}

}  // namespace drover::config
