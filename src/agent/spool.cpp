#include "agent/spool.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/fd_io.hpp"
#include "common/strings.hpp"

namespace drover::agent {

nlohmann::json to_json(const StepdConfig& c) {
  const CgroupPlan& p = c.cgroups;
  return {{"kill_wait_ms", c.kill_wait_ms},
          {"allow_root_jobs", c.allow_root_jobs},
          {"node_gpu_files", c.node_gpu_files},
          {"cgroup_node", c.cgroup_node},
          {"usage_interval_s", c.usage_interval_s},
          {"usage_samples", c.usage_samples},
          {"cgroups",
           {{"memory", p.memory}, {"cpuset", p.cpuset}, {"devices", p.devices}, {"freezer", p.freezer},
            {"unified", p.unified}, {"memory_v2", p.memory_v2}, {"cpuset_v2", p.cpuset_v2},
            {"devices_bpf", p.devices_bpf}, {"constrain_devices", p.constrain_devices}}}};
}

StepdConfig stepd_config_from_json(const nlohmann::json& j) {
  StepdConfig c;
  c.kill_wait_ms = j.value("kill_wait_ms", int64_t{30000});
  c.allow_root_jobs = j.value("allow_root_jobs", false);
  c.node_gpu_files = j.value("node_gpu_files", std::vector<std::string>{});
  c.cgroup_node = j.value("cgroup_node", "");
  c.usage_interval_s = j.value("usage_interval_s", int64_t{30});
  c.usage_samples = j.value("usage_samples", true);
  const auto& g = j.contains("cgroups") ? j["cgroups"] : nlohmann::json::object();
  c.cgroups.memory = g.value("memory", "");
  c.cgroups.cpuset = g.value("cpuset", "");
  c.cgroups.devices = g.value("devices", "");
  c.cgroups.freezer = g.value("freezer", "");
  c.cgroups.unified = g.value("unified", "");
  c.cgroups.memory_v2 = g.value("memory_v2", false);
  c.cgroups.cpuset_v2 = g.value("cpuset_v2", false);
  c.cgroups.devices_bpf = g.value("devices_bpf", false);
  c.cgroups.constrain_devices = g.value("constrain_devices", false);
  return c;
}

std::string step_dir_name(const StepKey& key) { return "job" + key.str(); }

std::optional<StepKey> parse_step_dir_name(std::string_view name) {
  if (name.rfind("job", 0) != 0) return std::nullopt;
  name.remove_prefix(3);
  auto dot = name.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  auto job = parse_int(name.substr(0, dot));
  std::string_view step = name.substr(dot + 1);
  if (!job || *job <= 0) return std::nullopt;
  StepKey key;
  key.job_id = static_cast<uint64_t>(*job);
  if (step == "batch") return key;
  auto sid = parse_int(step);
  if (!sid) return std::nullopt;
  key.step_id = *sid;
  return key;
}

Status write_file_atomic(const std::string& path, const std::string& content, unsigned mode) {
  const std::string tmp = path + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return make_error("cannot create " + tmp + ": " + std::strerror(errno));
  if (!write_all(fd, content)) {
    int err = errno;
    close(fd);
    return make_error("cannot write " + tmp + ": " + std::strerror(err));
  }
  fchmod(fd, mode);
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    return make_error("cannot rename " + tmp + " to " + path + ": " + std::strerror(errno));
  }
  return {};
}

Result<nlohmann::json> read_json_file(const std::string& path) {
  auto text = read_text(path);  // parsing from memory, not a stream: a third of the instructions
  if (!text) return text.error();
  try {
    return nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception& e) {
    return make_error(path + ": " + e.what());
  }
}

std::optional<ControlCommand> parse_control_line(std::string_view line) {
  std::istringstream in{std::string(trim(line))};
  ControlCommand c;
  if (!(in >> c.verb)) return std::nullopt;
  const bool one_arg = c.verb == "terminate" || c.verb == "end" || c.verb == "requeue" || c.verb == "preempt" ||
                       c.verb == "kill" || c.verb == "time_limit";
  std::size_t fixed = c.verb == "signal" ? 2 : one_arg ? 1 : 0;
  std::string word;
  while (c.args.size() < fixed && in >> word) c.args.push_back(word);
  if (c.args.size() < fixed) return std::nullopt;
  std::getline(in, c.rest);
  c.rest = std::string(trim(c.rest));
  return c;
}

Status send_control(const std::string& step_dir, const std::string& line) {
  const std::string path = step_dir + "/" + kCtlFifo;
  int fd = open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENXIO) return make_error("the step daemon for " + step_dir + " is not running (no reader on " + path + ")");
    return make_error("cannot open " + path + ": " + std::strerror(errno));
  }
  std::string msg = line + "\n";
  ssize_t n = write(fd, msg.data(), msg.size());  // < PIPE_BUF: atomic
  int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(msg.size())) return make_error("cannot write to " + path + ": " + std::strerror(err));
  return {};
}

}  // namespace drover::agent
