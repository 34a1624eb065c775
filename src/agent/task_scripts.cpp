#include "agent/task_scripts.hpp"

#include <string_view>

#include <fmt/format.h>

#include "common/fd_io.hpp"
#include "common/strings.hpp"

namespace drover::agent {
namespace {

constexpr int64_t kSrunTaskEpilogTimeoutS = 5;  // Slurm kills srun's --task-epilog after 5 s
constexpr std::size_t kPrologOutput = 1 << 20;  // what a prolog may print and be read

void set_env(std::vector<std::string>& env, const std::string& name, const std::string* value) {
  const std::string prefix = name + "=";
  for (auto it = env.begin(); it != env.end(); ++it) {
    if (it->compare(0, prefix.size(), prefix) != 0) continue;
    if (value) *it = prefix + *value;
    else env.erase(it);
    return;
  }
  if (value) env.push_back(prefix + *value);
}

bool valid_name(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  for (char c : name) {
    if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

// How each of them runs: with the task's environment, in its directory.
ScriptOptions options_for(const TaskScript& t, const std::string& work_dir, const std::vector<std::string>& env) {
  ScriptOptions so;
  so.env = env;
  so.cwd = work_dir;
  so.timeout_s = t.timeout_s;
  return so;
}

std::string failure_line(const std::string& node, const std::string& label, int status) {
  return fmt::format("slurmstepd-{}: error: {} failed status={}\n", node, label, status);
}

}  // namespace

std::vector<TaskScript> task_prologs(const std::string& conf, const std::string& srun) {
  std::vector<TaskScript> out;
  if (!conf.empty()) out.push_back({"TaskProlog", conf, 0});
  if (!srun.empty()) out.push_back({"--task-prolog", srun, 0});
  return out;
}

std::vector<TaskScript> task_epilogs(const std::string& srun, const std::string& conf) {
  std::vector<TaskScript> out;
  if (!srun.empty()) out.push_back({"--task-epilog", srun, kSrunTaskEpilogTimeoutS});
  if (!conf.empty()) out.push_back({"TaskEpilog", conf, 0});
  return out;
}

std::string apply_prolog_output(const std::string& output, std::vector<std::string>& env) {
  std::string printed;
  std::size_t at = 0;
  while (at < output.size()) {
    std::size_t nl = output.find('\n', at);
    std::string_view line(output.data() + at, (nl == std::string::npos ? output.size() : nl) - at);
    at = nl == std::string::npos ? output.size() : nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.rfind("export ", 0) == 0) {
      std::string_view rest = trim(line.substr(7));
      std::size_t eq = rest.find('=');
      if (eq == std::string_view::npos || !valid_name(rest.substr(0, eq))) continue;
      const std::string value(line.substr(line.find('=') + 1));  // everything after '=', as written
      set_env(env, std::string(rest.substr(0, eq)), &value);
    } else if (line.rfind("unset ", 0) == 0) {
      std::string_view name = trim(line.substr(6));
      if (valid_name(name)) set_env(env, std::string(name), nullptr);
    } else if (line.rfind("print ", 0) == 0) {
      printed.append(line.substr(6)).push_back('\n');
    }
  }
  return printed;
}

int run_task_prologs(const std::vector<TaskScript>& prologs, const std::string& node, const std::string& work_dir,
                     std::vector<std::string>& env) {
  for (const auto& p : prologs) {
    ScriptOptions so = options_for(p, work_dir, env);
    so.stderr_fd = kStderrDiscard;
    so.keep_bytes = kPrologOutput;
    const ScriptRun run = run_script(p.program, so);
    write_all(1, apply_prolog_output(run.output, env));
    if (run.ok()) continue;
    const int code = !run.started ? 127 : run.timed_out ? 128 + 9 : run.signal ? 128 + run.signal : run.exit_code;
    write_all(2, failure_line(node, p.label, code));
    return code;
  }
  return 0;
}

void run_task_epilogs(const std::vector<TaskScript>& epilogs, const std::string& node, const std::string& work_dir,
                      const std::vector<std::string>& env, const std::optional<ScriptUser>& user, int stderr_fd) {
  for (const auto& e : epilogs) {
    ScriptOptions so = options_for(e, work_dir, env);
    so.keep_output = false;
    so.stderr_fd = stderr_fd;
    so.user = user;
    const ScriptRun run = run_script(e.program, so);
    if (run.ok()) continue;
    // The wait status, as Slurm prints it: exit code << 8, or the signal.
    const int status = !run.started ? 127 << 8 : run.timed_out ? 9 : run.signal ? run.signal : run.exit_code << 8;
    if (stderr_fd >= 0) write_all(stderr_fd, failure_line(node, e.label, status));
  }
}

}  // namespace drover::agent
