// Control groups behind one interface, for cgroup v1 (one hierarchy per
// controller, as on this build machine), v2 (one unified tree, as on current
// distributions) and the hybrid layout (v1 controllers plus an empty v2 tree,
// which still tracks and kills processes).
//
// The agent probes once (CgroupHost::probe) and hands the resulting plan to
// every step daemon, which creates <base>/<node>/job_<id>/step_<step> in each
// usable hierarchy (StepCgroup). Everything is created below the agent's own
// cgroup, so a host's own limits still apply and nothing else is touched.
// What cannot be enforced is listed once, in words, in CgroupHost::limits().
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/result.hpp"

namespace drover::agent {

struct CgroupOptions {
  bool enabled = true;
  std::string mount_root = "/sys/fs/cgroup";  // where the hierarchies are mounted
  std::string subdir = "drover";              // created below the agent's own cgroup
  // What to confine (cgroup.conf's Constrain* switches); set_slurm_plugins()
  // turns them off for a TaskPlugin without task/cgroup.
  bool constrain_ram = true;
  bool constrain_cores = true;
  bool constrain_devices = true;
  // Why the switched-off constraints (or all cgroups) are off, in the
  // configuration's words: "TaskPlugin=task/none in slurm.conf".
  std::string off_because;
  // v2: when the agent's cgroup holds processes, controllers cannot be enabled
  // below it; with this set the agent moves itself into a leaf "<own>/agent"
  // first (what a systemd unit with Delegate=yes expects). Off in tests.
  bool move_agent_to_leaf = false;
};

// Applies slurm.conf's TaskPlugin and ProctrackType (null: not written) as
// Slurm reads them. Unwritten, Drover's default stays: every constraint, and
// tracking through cgroups. A TaskPlugin without task/cgroup (task/none,
// task/affinity) confines neither cores, memory nor devices; if ProctrackType
// is not proctrack/cgroup either (linuxproc, pgid), no cgroup is made at all
// and the step daemon tracks a job's processes as their subreaper.
void set_slurm_plugins(CgroupOptions& o, const std::string* task_plugin, const std::string* proctrack);

// The result of probing: absolute base directories, by role.
struct CgroupPlan {
  std::string memory;   // v1 memory hierarchy base, or the v2 base when memory is enabled there
  std::string cpuset;
  std::string devices;  // v1 devices hierarchy base, or the v2 base when a BPF device filter is used
  bool devices_bpf = false;  // devices: the v2 tree, each step's cgroup gets a BPF device filter
  std::string freezer;  // v1 freezer, to stop a job while it is killed
  std::string unified;  // v2 tree: tracking, cgroup.kill, and (pure v2) controllers
  bool memory_v2 = false;  // memory/cpuset live in the unified tree
  bool cpuset_v2 = false;
  bool constrain_devices = false;

  bool tracks() const { return !unified.empty() || !freezer.empty() || !memory.empty() || !cpuset.empty(); }
};

class CgroupHost {
 public:
  static CgroupHost probe(const CgroupOptions& opts);

  const CgroupPlan& plan() const { return plan_; }
  // One line per thing this host cannot enforce, e.g. "memory limits: no
  // usable memory controller (...)"; empty when everything works.
  const std::vector<std::string>& limits() const { return limits_; }
  // "cgroup v1 (memory, cpuset, devices, freezer) with the v2 tree for tracking".
  const std::string& description() const { return description_; }

 private:
  CgroupPlan plan_;
  std::vector<std::string> limits_;
  std::string description_;
};

// One step's cgroups. Created by the step daemon; paths are recorded in the
// spool so that a restarted agent can find the members again.
class StepCgroup {
 public:
  StepCgroup() = default;
  // Creates the directories (job level and step level) and applies limits.
  // Problems that leave a limit unenforced are appended to `warnings`; an Error
  // only when not even tracking could be set up where the plan promised it.
  static Result<StepCgroup> create(const CgroupPlan& plan, const std::string& rel_job, const std::string& rel_step,
                                   std::vector<std::string>& warnings);

  Status limit_memory(int64_t mb, std::vector<std::string>& warnings);
  Status limit_cpus(const std::vector<int>& cpu_ids, std::vector<std::string>& warnings);
  // Denies every device file in `deny` (the node's GPUs not allocated here).
  // Returns whether isolation is in force for all of them.
  bool deny_devices(const std::vector<std::string>& deny, std::vector<std::string>& warnings);

  // The cgroup.procs files a new task writes "0" into (before it drops root).
  const std::vector<std::string>& procs_files() const { return procs_files_; }
  // Every process in the step's cgroups (and below), sorted, unique.
  std::vector<pid_t> members() const;
  // Kills every member with SIGKILL: cgroup.kill where there is one, else
  // freeze, kill, thaw. Returns how many member processes it found.
  int kill_all() const;
  // OOM kills seen in the step (and job) memory cgroup since creation.
  int64_t oom_kills() const;
  // Removes the step directories (and the job's, when no other step uses it).
  void remove() const;

  bool empty() const { return dirs_.empty(); }
  nlohmann::json to_json() const;
  static StepCgroup from_json(const nlohmann::json& j);

 private:
  std::map<std::string, std::string> dirs_;      // role -> step directory
  std::map<std::string, std::string> job_dirs_;  // role -> job directory
  std::vector<std::string> procs_files_;
  bool memory_v2_ = false;
  bool cpuset_v2_ = false;
  bool devices_bpf_ = false;
  int64_t job_oom_baseline_ = 0;
};

// Small file helpers shared with the probes, /proc readers and tests.
Result<std::string> read_text(const std::string& path);
Status write_text(const std::string& path, const std::string& text);

}  // namespace drover::agent
