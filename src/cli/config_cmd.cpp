// drover config check|show|reference: the admin's first contact with Drover.
#include <cstdio>
#include <optional>
#include <string>

#include "cli/commands.hpp"
#include "config/doctor.hpp"
#include "config/model.hpp"
#include "config/report.hpp"

namespace drover::cli {
namespace {

const char* const kUsage =
    "usage: drover config check [--config PATH] [--json]   diagnose slurm.conf, gres.conf and qos.conf\n"
    "       drover config show [--config PATH]             print the effective configuration\n"
    "       drover config reference                        print every key Drover reads (Markdown)\n"
    "The configuration is --config PATH, else $DROVER_CONF, else $SLURM_CONF, else /etc/drover/slurm.conf;\n"
    "gres.conf and qos.conf are read from the same directory when present.\n"
    "`check` exits 0 when it finds no warning or error (info only), 1 with warnings, 2 with errors.\n";

struct Options {
  std::string sub;
  std::string config;
  bool json = false;
  bool help = false;
};

// Returns an error message for a bad command line.
std::optional<std::string> parse_options(const Args& args, Options& o) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      o.help = true;
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--config" || a == "-c") {
      if (i + 1 >= args.size()) return "option " + a + " needs a path";
      o.config = args[++i];
      if (o.config.empty()) return "option " + a + " needs a non-empty path";
    } else if (a.rfind("--config=", 0) == 0) {
      o.config = a.substr(9);
      if (o.config.empty()) return "option --config needs a non-empty path";
    } else if (!a.empty() && a[0] == '-') {
      return "unknown option " + a;
    } else if (o.sub.empty()) {
      o.sub = a;
    } else {
      return "unexpected argument " + a;
    }
  }
  return std::nullopt;
}

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "drover config: %s\n%s", msg.c_str(), kUsage);
  return 2;
}

int run_check(const Options& o) {
  std::string path = config::resolve_config_path(o.config);
  auto cfg = config::load_config({path, {}, {}});
  Diagnostics all;
  std::vector<std::string> files;
  if (!cfg) {
    all.add(Severity::kError, "config-unreadable", SourceLoc{path, 0, 0}, "", cfg.error().message,
            "give the configuration with --config PATH or DROVER_CONF=PATH (default: /etc/drover/slurm.conf)");
  } else {
    all = cfg->diags;
    all.append(config::check_config(*cfg));
    files = cfg->files_read;
  }
  std::string out = o.json ? config::check_report_json(all, path, files) : config::check_report_text(all);
  std::fputs(out.c_str(), stdout);
  return config::check_exit_status(all);
}

int run_show(const Options& o) {
  if (o.json) return usage_error("--json is only for `drover config check`");
  std::string path = config::resolve_config_path(o.config);
  auto cfg = config::load_config({path, {}, {}});
  if (!cfg) {
    std::fprintf(stderr, "drover config show: %s\n  fix: give the configuration with --config PATH or DROVER_CONF=PATH\n",
                 cfg.error().message.c_str());
    return 2;
  }
  std::fputs(config::show_config(*cfg).c_str(), stdout);
  if (cfg->diags.has_errors() || cfg->diags.has_warnings()) {
    std::fprintf(stderr, "drover config show: the configuration has problems (%s); run `drover config check`\n",
                 config::summary_line(cfg->diags).c_str());
  }
  return cfg->diags.has_errors() ? 2 : 0;
}

}  // namespace

int config_main(const Args& args) {
  Options o;
  if (auto err = parse_options(args, o)) return usage_error(*err);
  if (o.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (o.sub == "check") return run_check(o);
  if (o.sub == "show") return run_show(o);
  if (o.sub == "reference") {
    if (!o.config.empty() || o.json) return usage_error("`drover config reference` takes no options");
    std::fputs(config::config_reference_markdown().c_str(), stdout);
    return 0;
  }
  return usage_error(o.sub.empty() ? "missing subcommand" : "unknown subcommand " + o.sub);
}

}  // namespace drover::cli
