// Builders and helpers shared by the agent's tests (header-only, test use only).
#pragma once

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "agent/launch_spec.hpp"
#include "agent/supervisor.hpp"

namespace drover::agent::testing {

inline std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void spit(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// "K=V" lines -> map (later lines win).
inline std::map<std::string, std::string> parse_env_lines(const std::string& text) {
  std::map<std::string, std::string> m;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos && eq > 0) m[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return m;
}

// A scratch directory every user can enter (jobs may run as another user).
class TempDir {
 public:
  TempDir() {
    std::string tmpl = std::filesystem::temp_directory_path().string() + "/drover-agent-test-XXXXXX";
    path_ = mkdtemp(tmpl.data());
    chmod(path_.c_str(), 0755);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string sub(const std::string& name, mode_t mode = 0755) const {
    std::string p = path_ + "/" + name;
    std::filesystem::create_directories(p);
    chmod(p.c_str(), mode);
    return p;
  }

 private:
  std::string path_;
};

inline uint64_t next_job_id() {
  static std::atomic<uint64_t> id{1000 + static_cast<uint64_t>(getpid() % 1000) * 1000};
  return ++id;
}

inline std::string unique_node() {
  static std::atomic<int> n{0};
  return "t" + std::to_string(getpid()) + "n" + std::to_string(++n);
}

inline std::string stepd_path() { return std::string(DROVER_BINARY_DIR) + "/bin/drover-stepd"; }

inline SupervisorOptions test_options(const std::string& spool, const std::string& node) {
  SupervisorOptions o;
  o.node_name = node;
  o.spool_dir = spool;
  o.stepd_command = {stepd_path()};
  o.pmix_stepd_command = {std::string(DROVER_BINARY_DIR) + "/bin/drover", "agent", "--stepd"};
  o.kill_wait_ms = 300;
  o.allow_root_jobs = true;
  o.launch_timeout_ms = 10000;
  return o;
}

// A one-node, one-task batch job run by the current user in `work_dir`.
inline LaunchRequest batch_request(const std::string& node, const std::string& work_dir, const std::string& script) {
  LaunchRequest r;
  r.job.job_id = next_job_id();
  r.key.job_id = r.job.job_id;
  r.job.job_name = "agent-test";
  passwd* pw = getpwuid(geteuid());
  r.job.user = pw ? pw->pw_name : "root";
  r.job.uid = geteuid();
  r.job.gid = getegid();
  r.job.account = "research";
  r.job.partition = "compute";
  r.job.qos = "normal";
  r.job.cluster_name = "test";
  r.job.submit_dir = work_dir;
  r.job.submit_host = "submit";
  r.job.nodes = {node};
  r.job.cpus_per_node = {1};
  r.job.tasks_per_node = {1};
  r.job.submit_env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/root", "LANG=C.UTF-8"};
  r.alloc.node_name = node;
  r.alloc.cpus = 1;
  r.script = script;
  return r;
}

// A step of `ntasks` tasks, all on this node.
inline LaunchRequest step_request(const std::string& node, const std::string& work_dir, int ntasks,
                                  std::vector<std::string> argv) {
  LaunchRequest r = batch_request(node, work_dir, "");
  r.key.step_id = 0;
  r.script.clear();
  r.argv = std::move(argv);
  r.job.tasks_per_node = {ntasks};
  r.layout.nodes = {node};
  r.layout.tasks_per_node = {ntasks};
  r.layout.node_index = 0;
  for (int i = 0; i < ntasks; ++i) r.layout.global_task_ids.push_back(i);
  return r;
}

}  // namespace drover::agent::testing
