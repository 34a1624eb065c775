#include "client/session.hpp"

#include <unistd.h>

#include <cstdlib>

#include "cli/cli_error.hpp"
#include "common/duration.hpp"
#include "common/strings.hpp"
#include "common/user_db.hpp"

extern char** environ;

namespace drover::client {

Invocation invocation(const std::string& program, const std::vector<std::string>& args) {
  Invocation inv;
  inv.program = program;
  std::size_t start = 0;
  if (!args.empty() && args[0].rfind("--config=", 0) == 0) {
    inv.config_flag = args[0].substr(9);
    start = 1;
  } else if (args.size() >= 2 && args[0] == "--config") {
    inv.config_flag = args[1];
    start = 2;
  }
  inv.args.assign(args.begin() + static_cast<long>(start), args.end());
  // Timestamps as Slurm's commands show them under SLURM_TIME_FORMAT.
  if (const char* f = std::getenv("SLURM_TIME_FORMAT")) set_timestamp_format(f);
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq != std::string::npos) inv.env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return inv;
}

void write_out(const std::string& text, FILE* f) {
  if (!text.empty()) std::fwrite(text.data(), 1, text.size(), f);
}

int print_output(const cli::CommandOutput& out) {
  // Its stderr holds what was found before anything was listed (a format
  // letter it does not know, a job id not found): said first, as Slurm's
  // commands say it, also where both streams go to one place.
  write_out(out.err, stderr);
  write_out(out.out, stdout);
  return out.exit_code;
}

std::string caller_name() {
  auto u = user_by_uid(getuid());
  return u ? u->name : std::to_string(getuid());
}

void print_error_lines(const std::string& program, const std::string& message) {
  for (const auto& line : split(message, '\n')) {
    if (!line.empty()) std::fprintf(stderr, "%s: error: %s\n", program.c_str(), line.c_str());
  }
}

void print_test_only_refusal(const std::string& program, const std::string& message) {
  constexpr std::string_view kBatch = "Batch job submission failed: ";
  for (const auto& line : split(message, '\n')) {
    if (line.empty()) continue;
    if (line.rfind(kBatch, 0) == 0) {
      write_out("allocation failure: " + line.substr(kBatch.size()) + "\n", stderr);
    } else {
      print_error_lines(program, line);
    }
  }
}

bool lists_this_cluster(const std::string& clusters, const ControllerApi& api) {
  for (const auto& name : split(clusters, ',')) {
    if (name == api.endpoint().cluster || iequals(name, "all")) return true;
  }
  return false;
}

bool names_this_cluster(const std::string& program, const std::string& clusters, const ControllerApi& api) {
  const bool ours = lists_this_cluster(clusters, api);
  for (const auto& name : split(clusters, ',')) {
    if (name != api.endpoint().cluster && !iequals(name, "all")) {
      std::fprintf(stderr, "%s: error: No cluster '%s' known by database.\n", program.c_str(), name.c_str());
    }
  }
  if (ours) return true;
  std::fprintf(stderr, "%s: error: '%s' can't be reached now, or it is an invalid entry for --cluster.  Use "
                       "'sacctmgr list clusters' to see available clusters.\n", program.c_str(), clusters.c_str());
  std::fprintf(stderr, "%s: error: drover: this cluster is %s (slurm.conf ClusterName, %s); Drover's commands "
                       "reach no other\n", program.c_str(), api.endpoint().cluster.c_str(),
               api.endpoint().conf_path.c_str());
  return false;
}

std::vector<std::string> configured_gres_types(const Invocation& inv) {
  const std::string types = command_conf_value(inv.config_flag, "GresTypes");
  return types.empty() ? std::vector<std::string>{} : split(types, ',');
}

std::unique_ptr<ControllerApi> connect_or_report(const Invocation& inv) {
  auto ep = find_controller(inv.config_flag);
  if (!ep) {
    print_error_lines(inv.program, ep.error().message);
    return nullptr;
  }
  auto api = ControllerApi::connect(*ep, inv.program + " 0.1.0");
  if (!api) {
    print_error_lines(inv.program, api.error().message);
    return nullptr;
  }
  return std::move(*api);
}

int report_load_failure(const Invocation& inv, const ControllerApi& api, const ApiError& e, const char* what) {
  if (!e.denied()) return report_failure(inv, api, e);
  std::fprintf(stderr, "%s: %s\n", what, e.message.c_str());
  return 1;
}

int report_failure(const Invocation& inv, const ControllerApi& api, const ApiError& e) {
  if (e.unreachable) {
    write_out(unreachable_text(inv.program, e, api.endpoint()), stderr);
  } else {
    print_error_lines(inv.program, e.message);
  }
  return 1;
}

}  // namespace drover::client
