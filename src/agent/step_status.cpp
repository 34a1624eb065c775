#include "agent/step_status.hpp"

#include <sys/wait.h>

#include <algorithm>

namespace drover::agent {
namespace {

constexpr std::pair<JobState, std::string_view> kStateNames[] = {
    {JobState::kRunning, "RUNNING"},     {JobState::kCompleted, "COMPLETED"},
    {JobState::kFailed, "FAILED"},       {JobState::kCancelled, "CANCELLED"},
    {JobState::kTimeout, "TIMEOUT"},     {JobState::kOutOfMemory, "OUT_OF_MEMORY"},
    {JobState::kNodeFail, "NODE_FAIL"},
};

}  // namespace

std::string_view state_name(JobState s) {
  for (const auto& [state, name] : kStateNames) {
    if (state == s) return name;
  }
  return "UNKNOWN";
}

std::optional<JobState> parse_state(std::string_view name) {
  for (const auto& [state, n] : kStateNames) {
    if (n == name) return state;
  }
  return std::nullopt;
}

ExitStatus ExitStatus::from_wait_status(int wstatus) {
  ExitStatus e;
  if (WIFEXITED(wstatus)) {
    e.code = WEXITSTATUS(wstatus);
  } else if (WIFSIGNALED(wstatus)) {
    e.signal = WTERMSIG(wstatus);
    e.core_dumped = WCOREDUMP(wstatus);
  }
  return e;
}

std::string ExitStatus::str() const { return std::to_string(code) + ":" + std::to_string(signal); }

ExitStatus worst_exit(const std::vector<ExitStatus>& exits) {
  ExitStatus w;
  for (const auto& e : exits) {
    if (e.signal != 0) return e;  // the first task a signal ended
    w.code = std::max(w.code, e.code);
  }
  return w;
}

nlohmann::json to_json(const StepStatus& s) {
  nlohmann::json tasks = nlohmann::json::array();
  for (const auto& t : s.tasks) {
    tasks.push_back({{"rank", t.rank}, {"pid", t.pid}, {"ended", t.ended}, {"code", t.exit.code},
                     {"signal", t.exit.signal}, {"core_dumped", t.exit.core_dumped}, {"error", t.error},
                     {"usage", to_json(t.usage)}});
  }
  return {{"job_id", s.key.job_id},
          {"step_id", s.key.step_id},
          {"state", std::string(state_name(s.state))},
          {"exit_code", s.exit.code},
          {"exit_signal", s.exit.signal},
          {"core_dumped", s.exit.core_dumped},
          {"reason", s.reason},
          {"launch_failed", s.launch_failed},
          {"tasks", tasks},
          {"warnings", s.warnings},
          {"start_time", s.start_time},
          {"end_time", s.end_time},
          {"time_limit_s", s.time_limit_s},
          {"stepd_pid", s.stepd_pid},
          {"stepd_start_ticks", s.stepd_start_ticks},
          {"stdout", s.stdout_path},
          {"stderr", s.stderr_path},
          {"cgroup", s.cgroup},
          {"oom_kills", s.oom_kills},
          {"orphans", to_json(s.orphans)},
          {"sampled_ms", s.sampled_ms},
          {"pids", s.pids}};
}

Result<StepStatus> step_status_from_json(const nlohmann::json& j) {
  try {
    StepStatus s;
    s.key.job_id = j.at("job_id").get<uint64_t>();
    s.key.step_id = j.at("step_id").get<int64_t>();
    auto state = parse_state(j.at("state").get<std::string>());
    if (!state) return make_error("step status: unknown state '" + j.at("state").get<std::string>() + "'");
    s.state = *state;
    s.exit.code = j.value("exit_code", 0);
    s.exit.signal = j.value("exit_signal", 0);
    s.exit.core_dumped = j.value("core_dumped", false);
    s.reason = j.value("reason", "");
    s.launch_failed = j.value("launch_failed", false);
    for (const auto& t : j.value("tasks", nlohmann::json::array())) {
      TaskStatus ts;
      ts.rank = t.value("rank", 0);
      ts.pid = t.value("pid", 0);
      ts.ended = t.value("ended", false);
      ts.exit.code = t.value("code", 0);
      ts.exit.signal = t.value("signal", 0);
      ts.exit.core_dumped = t.value("core_dumped", false);
      ts.error = t.value("error", "");
      if (t.contains("usage")) ts.usage = task_usage_from_json(t["usage"]);
      s.tasks.push_back(std::move(ts));
    }
    s.warnings = j.value("warnings", std::vector<std::string>{});
    s.start_time = j.value("start_time", int64_t{0});
    s.end_time = j.value("end_time", int64_t{0});
    s.time_limit_s = j.value("time_limit_s", int64_t{0});
    s.stepd_pid = j.value("stepd_pid", 0);
    s.stepd_start_ticks = j.value("stepd_start_ticks", uint64_t{0});
    s.stdout_path = j.value("stdout", "");
    s.stderr_path = j.value("stderr", "");
    s.cgroup = j.value("cgroup", nlohmann::json::object());
    s.oom_kills = j.value("oom_kills", int64_t{0});
    s.sampled_ms = j.value("sampled_ms", int64_t{0});
    s.pids = j.value("pids", std::vector<pid_t>{});
    if (j.contains("orphans")) s.orphans = task_usage_from_json(j["orphans"]);
    return s;
  } catch (const nlohmann::json::exception& e) {
    return make_error(std::string("step status: ") + e.what());
  }
}

}  // namespace drover::agent
