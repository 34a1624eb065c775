// A real cluster for end-to-end tests: a controller and one agent per node,
// each `build/bin/drover` started as its own process, on free ports and in a
// fresh temporary directory, so that two test runs on one machine never
// collide. Commands run as processes too (build/bin/sbatch, ...), never
// whatever sbatch is on PATH.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rpc/testing.hpp"

namespace drover::e2e {

struct NodeDef {
  std::string name;
  int cpus = 16;
  int sockets = 2;
  int64_t mem_mb = 65536;
  std::string gpu_type;  // "" = no GPUs
  int gpus = 0;
  std::string features;
  int weight = 1;
  int64_t tmp_disk_mb = 0;           // TmpDisk= (0: not written)
  std::string fake_gpus = "config";  // what the agent emulates
};

struct ClusterDef {
  std::vector<NodeDef> nodes;
  std::vector<std::string> partitions;  // PartitionName=... lines
  std::vector<std::string> extra;       // more slurm.conf lines
  std::string qos_conf;                 // qos.conf beside slurm.conf ("" = none)
};

// hgpu1 (8 x h100), lgpu1 (4 x a100), cpu1, cpu2 (16 CPUs, 64 GB).
ClusterDef small_cluster();
// The seed's shapes: hgpu[1-4] (8 x h100, exclusive training partition), lgpu1, cpu[1-2].
ClusterDef seed_cluster();

struct CmdResult {
  int rc = -1;
  std::string out, err;
};

struct RunAs {
  uid_t uid = 0;
  gid_t gid = 0;
  bool set = false;
};

class TestCluster {
 public:
  explicit TestCluster(ClusterDef def);
  ~TestCluster();
  TestCluster(const TestCluster&) = delete;
  TestCluster& operator=(const TestCluster&) = delete;

  // Empty when the cluster is up (every node responding); else what failed.
  const std::string& error() const { return error_; }

  const std::string& dir() const { return dir_; }
  const std::string& conf() const { return conf_; }
  // A directory every user may write (mode 1777), the default cwd of commands;
  // work()/bin comes first on the commands' PATH (and so on their jobs').
  const std::string& work() const { return work_; }

  // `command`: a name in build/bin (sbatch, srun, ...) or an absolute path ("/bin/bash").
  CmdResult run(const std::string& command, const std::vector<std::string>& args, const RunAs& as = {},
                const std::string& stdin_text = "", const std::string& cwd = "") const;
  // Any program (an absolute path, else looked up on the commands' PATH) with
  // the commands' environment: DROVER_CONF, PATH with build/bin, USER.
  CmdResult run_program(const std::string& program, const std::vector<std::string>& args, const RunAs& as = {},
                        const std::string& stdin_text = "", const std::string& cwd = "") const;
  const std::string& bin() const { return bin_; }
  // sbatch ARGS...; the job id, or -1 (the refusal is in last_error()).
  int64_t submit(const std::vector<std::string>& args, const RunAs& as = {}) const;
  const std::string& last_error() const { return last_error_; }

  // squeue's %T for a job ("PENDING", "COMPLETED"); "" when unknown. `id` may be "12" or "12_3".
  std::string state(const std::string& id) const;
  std::string reason(const std::string& id) const;
  // Waits until the job is in one of `states`; false on timeout.
  bool wait_state(const std::string& id, const std::vector<std::string>& states,
                  std::chrono::milliseconds timeout = std::chrono::seconds(20)) const;
  bool wait_done(const std::string& id, std::chrono::milliseconds timeout = std::chrono::seconds(20)) const;
  // `scontrol show job ID` as Key=Value (the first record).
  std::map<std::string, std::string> job_fields(const std::string& id) const;
  std::map<std::string, std::string> node_fields(const std::string& node) const;

  // Daemons.
  bool start_controller();
  void kill_controller(int sig);
  bool start_agent(const std::string& node, const std::string& fake_gpus = "");
  void kill_agent(const std::string& node, int sig);
  // Whether the daemon ("controller" or "agent-NODE") has exited within `timeout` (reaped).
  bool daemon_exited(const std::string& daemon, std::chrono::milliseconds timeout);
  bool wait_nodes_responding(std::chrono::milliseconds timeout = std::chrono::seconds(20)) const;
  std::string log(const std::string& daemon) const;  // "controller" or "agent-NODE"

 private:
  bool write_config();
  pid_t spawn_daemon(const std::vector<std::string>& args, const std::string& log);
  void stop_all();

  ClusterDef def_;
  std::string error_;
  std::string dir_, conf_, work_, bin_;
  std::string cluster_name_;  // also names the agents' cgroups: drover_<name>
  int ctld_port_ = 0;
  std::map<std::string, int> agent_ports_;
  // The controller's and agents' ports, held (see HeldPort) for as long as the
  // cluster lives, so that no other test's server or client takes one while a
  // daemon starts or restarts.
  std::vector<rpc::testing::HeldPort> held_ports_;
  pid_t controller_ = -1;
  std::map<std::string, pid_t> agents_;
  mutable std::string last_error_;
};

// The test stops when its cluster did not come up, saying why.
#define REQUIRE_CLUSTER(c) ASSERT_TRUE((c).error().empty()) << (c).error()

// Waits until `pred` holds, polling every 50 ms.
bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds timeout);
std::string read_file(const std::string& path);
// The non-empty lines of a command's output.
std::vector<std::string> lines_of(const std::string& text);
// `sacct -P -n ARGS`'s output (a non-zero exit fails the test).
std::string sacct_p(const TestCluster& c, const std::vector<std::string>& args);

// A local user for the multi-user tests, created with useradd when running
// as root (nullopt otherwise: the test skips).
struct TestUser {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  RunAs as() const { return RunAs{uid, gid, true}; }
};
std::optional<TestUser> ensure_user(const std::string& name);

}  // namespace drover::e2e
