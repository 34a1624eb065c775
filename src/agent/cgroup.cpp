#include "agent/cgroup.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "agent/device_filter.hpp"
#include "common/strings.hpp"

namespace drover::agent {

Result<std::string> read_text(const std::string& path) {
  // open/read rather than a stream: cgroup, /proc and spool files are small,
  // and a stream costs a buffer and a locale for each of them.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error("cannot read " + path + ": " + std::strerror(errno));
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      int err = errno;
      close(fd);
      if (n < 0) return make_error("cannot read " + path + ": " + std::strerror(err));
      return out;
    }
  }
}

Status write_text(const std::string& path, const std::string& text) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return make_error("cannot open " + path + ": " + std::strerror(errno));
  ssize_t n = write(fd, text.data(), text.size());
  int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(text.size())) {
    return make_error("writing '" + std::string(trim(text)) + "' to " + path + " failed: " + std::strerror(err));
  }
  return {};
}

namespace {

struct Mounts {
  std::map<std::string, std::string> v1;  // controller -> mount point
  std::string v2;                         // unified mount point
};

// /proc/self/mountinfo: "... <mount point> ... - <fstype> <source> <super options>".
Mounts read_mounts() {
  Mounts m;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::istringstream pre(line.substr(0, dash)), post(line.substr(dash + 3));
    std::string id, parent, devno, root, mnt, fstype, source, opts;
    pre >> id >> parent >> devno >> root >> mnt;
    post >> fstype >> source >> opts;
    if (fstype == "cgroup2") {
      if (m.v2.empty()) m.v2 = mnt;
    } else if (fstype == "cgroup") {
      for (const auto& o : split(opts, ',')) {
        if (o == "memory" || o == "cpuset" || o == "devices" || o == "freezer") m.v1.emplace(o, mnt);
      }
    }
  }
  return m;
}

// /proc/self/cgroup: "4:memory:/path", "0::/path".
std::map<std::string, std::string> own_cgroups() {
  std::map<std::string, std::string> own;
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    auto c1 = line.find(':');
    auto c2 = line.find(':', c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) continue;
    std::string ctrls = line.substr(c1 + 1, c2 - c1 - 1);
    std::string path = line.substr(c2 + 1);
    if (ctrls.empty()) own[""] = path;
    for (const auto& c : split(ctrls, ',')) own[c] = path;
  }
  return own;
}

std::string join_path(const std::string& a, const std::string& b) {
  if (b.empty() || b == "/") return a;
  if (!a.empty() && a.back() == '/') return b.front() == '/' ? a + b.substr(1) : a + b;
  return b.front() == '/' ? a + b : a + "/" + b;
}

std::string parent_dir(const std::string& p) { return p.substr(0, p.rfind('/')); }

// v1 cpuset: a new cgroup has empty cpus/mems; copy the parent's so tasks can join.
void init_cpuset_v1(const std::string& dir) {
  for (const char* f : {"cpuset.cpus", "cpuset.mems"}) {
    auto cur = read_text(dir + "/" + f);
    if (cur && !std::string(trim(*cur)).empty()) continue;
    auto par = read_text(parent_dir(dir) + "/" + f);
    if (par) (void)write_text(dir + "/" + f, std::string(trim(*par)));
  }
}

// The v1 cpuset base: filled in, and new cpusets below it copy their
// parent's cpus and mems when they are created (the flag is inherited), so a
// step's directories start usable without being filled in file by file.
void init_cpuset_base_v1(const std::string& dir) {
  init_cpuset_v1(dir);
  (void)write_text(dir + "/cgroup.clone_children", "1");
}

// v2: make `controllers` available to the children of `dir`.
Status enable_subtree(const std::string& dir, const std::vector<std::string>& controllers) {
  std::string text;
  for (const auto& c : controllers) text += (text.empty() ? "+" : " +") + c;
  if (text.empty()) return {};
  return write_text(dir + "/cgroup.subtree_control", text);
}

// mkdir -p below `base` (which must exist), running `on_new` on every level
// created. `*failed_errno` is the errno of the mkdir that failed, 0 if none did.
template <class F>
Status make_dirs(const std::string& base, const std::string& rel, F on_new, int* failed_errno = nullptr) {
  std::string path = base;
  for (const auto& part : split(rel, '/')) {
    if (part.empty()) continue;
    path += "/" + part;
    if (mkdir(path.c_str(), 0755) == 0) {
      on_new(path);
    } else if (errno != EEXIST) {
      const int e = errno;
      if (failed_errno) *failed_errno = e;
      return make_error("cannot create cgroup " + path + ": " + std::strerror(e));
    }
  }
  if (failed_errno) *failed_errno = 0;
  return {};
}

bool has_controller(const std::string& dir, const std::string& name) {
  auto text = read_text(dir + "/cgroup.controllers");
  if (!text) return false;
  for (const auto& c : split(std::string(trim(*text)), ' ')) {
    if (c == name) return true;
  }
  return false;
}

std::string v1_base(const Mounts& m, const std::map<std::string, std::string>& own, const std::string& ctrl,
                     const std::string& subdir, std::string& why) {
  auto mnt = m.v1.find(ctrl);
  if (mnt == m.v1.end()) {
    why = "no " + ctrl + " controller mounted";
    return "";
  }
  auto o = own.find(ctrl);
  std::string base = join_path(join_path(mnt->second, o == own.end() ? "/" : o->second), subdir);
  if ((mkdir(base.c_str(), 0755) != 0 && errno != EEXIST) || access(base.c_str(), W_OK | X_OK) != 0) {
    why = "cannot create cgroups in " + base + ": " + std::strerror(errno);
    return "";
  }
  if (ctrl == "cpuset") init_cpuset_base_v1(base);
  return base;
}

struct V2Result {
  std::string base;
  bool memory = false, cpuset = false;
  std::string why;
};

V2Result probe_v2(const Mounts& m, const std::map<std::string, std::string>& own, const CgroupOptions& opts,
                  bool want_memory, bool want_cpuset) {
  V2Result r;
  if (m.v2.empty()) return r;
  auto o = own.find("");
  std::string own_dir = join_path(m.v2, o == own.end() ? "/" : o->second);
  std::string base = join_path(own_dir, opts.subdir);
  if ((mkdir(base.c_str(), 0755) != 0 && errno != EEXIST) || access(base.c_str(), W_OK | X_OK) != 0) {
    r.why = "cannot create cgroups in " + base + ": " + std::strerror(errno);
    return r;
  }
  r.base = base;
  std::vector<std::string> wanted;
  if (want_memory && has_controller(own_dir, "memory")) wanted.push_back("memory");
  if (want_cpuset && has_controller(own_dir, "cpuset")) wanted.push_back("cpuset");
  if (wanted.empty()) return r;
  Status st = enable_subtree(own_dir, wanted);
  if (!st && opts.move_agent_to_leaf) {
    std::string leaf = join_path(own_dir, "agent");
    if ((mkdir(leaf.c_str(), 0755) == 0 || errno == EEXIST) && write_text(leaf + "/cgroup.procs", "0")) {
      st = enable_subtree(own_dir, wanted);
    }
  }
  if (!st) {
    r.why = st.error().message + " (the agent's cgroup " + own_dir +
            " holds processes; run the agent in a delegated cgroup of its own, e.g. systemd Delegate=yes)";
    return r;
  }
  if (Status s2 = enable_subtree(base, wanted); !s2) {
    r.why = s2.error().message;
    return r;
  }
  for (const auto& c : wanted) (c == "memory" ? r.memory : r.cpuset) = true;
  return r;
}

}  // namespace

namespace {

// "cgroup v1 (memory, cpuset, ...) with the cgroup v2 tree for tracking and kill".
std::string describe(const CgroupPlan& p) {
  std::vector<std::string> v1;
  if (!p.memory.empty() && !p.memory_v2) v1.push_back("memory");
  if (!p.cpuset.empty() && !p.cpuset_v2) v1.push_back("cpuset");
  if (!p.devices.empty() && !p.devices_bpf) v1.push_back("devices");
  if (!p.freezer.empty()) v1.push_back("freezer");
  std::string d = v1.empty() ? "" : "cgroup v1 (" + join(v1, ", ") + ")";
  if (!p.unified.empty()) {
    std::string v2 = p.memory_v2 || p.cpuset_v2 ? "cgroup v2" : "the cgroup v2 tree for tracking and kill";
    if (p.devices_bpf) v2 += (p.memory_v2 || p.cpuset_v2 ? " with" : " and") + std::string(" a BPF device filter");
    d += (d.empty() ? "" : " with ") + v2;
  }
  return d.empty() ? "no usable cgroups" : d;
}

struct Why {
  std::string memory, cpuset, devices, freezer, v2;
  std::string devices_bpf;  // why the v2 tree cannot filter devices
  bool devices_mounted = false;
};

std::vector<std::string> explain_limits(const CgroupOptions& opts, const CgroupPlan& p, const Why& why) {
  auto reason = [&](const std::string& v1) { return v1.empty() ? why.v2 : v1; };
  std::vector<std::string> out;
  if (!opts.off_because.empty() && !(opts.constrain_ram && opts.constrain_cores && opts.constrain_devices)) {
    std::vector<std::string> off;
    if (!opts.constrain_ram) off.push_back("memory limits (--mem) and OUT_OF_MEMORY detection");
    if (!opts.constrain_cores) off.push_back("CPU confinement (cores)");
    if (!opts.constrain_devices) off.push_back("GPU device isolation");
    out.push_back(join(off, ", ") + ": off by configuration (" + opts.off_because + ")");
  }
  if (opts.constrain_ram && p.memory.empty()) {
    out.push_back("memory limits (--mem) and OUT_OF_MEMORY detection: " + reason(why.memory));
  }
  if (opts.constrain_cores && p.cpuset.empty()) out.push_back("CPU confinement (cores): " + reason(why.cpuset));
  if (opts.constrain_devices && p.devices.empty()) {
    std::vector<std::string> whys;
    if (why.devices_mounted) whys.push_back("cgroup v1 devices: " + why.devices);
    whys.push_back("cgroup v2 device filter: " + (why.devices_bpf.empty() ? why.v2 : why.devices_bpf));
    out.push_back("GPU device isolation: " + join(whys, "; ") +
                  "; jobs see their GPUs through CUDA_VISIBLE_DEVICES only");
  }
  if (!p.tracks()) {
    out.push_back("process tracking through cgroups: none usable; the step daemon finds a job's processes "
                  "through the process tree (it is their child subreaper)");
  }
  return out;
}

}  // namespace

void set_slurm_plugins(CgroupOptions& o, const std::string* task_plugin, const std::string* proctrack) {
  const bool task_cgroup = !task_plugin || list_has(*task_plugin, "task/cgroup");
  const bool track_cgroup = !proctrack || iequals(trim(*proctrack), "proctrack/cgroup");
  if (task_cgroup) return;
  o.constrain_ram = o.constrain_cores = o.constrain_devices = false;
  o.off_because = "TaskPlugin=" + *task_plugin + " in slurm.conf";
  if (!track_cgroup) {
    o.enabled = false;
    o.off_because = "ProctrackType=" + std::string(trim(*proctrack)) + " and " + o.off_because;
  }
}

CgroupHost CgroupHost::probe(const CgroupOptions& opts) {
  CgroupHost h;
  if (!opts.enabled) {
    const std::string why = opts.off_because.empty() ? "by configuration" : "by configuration (" + opts.off_because + ")";
    h.description_ = "cgroups disabled " + why;
    h.limits_.push_back("memory limits, CPU confinement and GPU device isolation: cgroups are disabled " + why +
                        "; the step daemon finds a job's processes through the process tree (it is their child "
                        "subreaper)");
    return h;
  }
  Mounts m = read_mounts();
  auto own = own_cgroups();
  Why why;
  why.devices_mounted = m.v1.count("devices") > 0;
  CgroupPlan& p = h.plan_;
  if (opts.constrain_ram) p.memory = v1_base(m, own, "memory", opts.subdir, why.memory);
  if (opts.constrain_cores) p.cpuset = v1_base(m, own, "cpuset", opts.subdir, why.cpuset);
  if (opts.constrain_devices) p.devices = v1_base(m, own, "devices", opts.subdir, why.devices);
  V2Result v2 = probe_v2(m, own, opts, opts.constrain_ram && p.memory.empty(), opts.constrain_cores && p.cpuset.empty());
  // The v1 freezer only holds a job still while it is killed; a v2 tree with
  // cgroup.kill (Linux 5.14) kills it whole, and the step then needs one
  // hierarchy fewer (two directories made and removed per job).
  if (v2.base.empty() || access((v2.base + "/cgroup.kill").c_str(), F_OK) != 0) {
    p.freezer = v1_base(m, own, "freezer", opts.subdir, why.freezer);
  }
  why.v2 = v2.why.empty() ? "no cgroup v2 controller available to the agent" : v2.why;
  p.unified = v2.base;
  if (v2.memory) {
    p.memory = v2.base;
    p.memory_v2 = true;
  }
  if (v2.cpuset) {
    p.cpuset = v2.base;
    p.cpuset_v2 = true;
  }
  // No v1 devices controller (pure v2, as on current distributions): each
  // step's v2 cgroup gets a BPF program that denies the GPUs it was not given.
  if (opts.constrain_devices && p.devices.empty() && !p.unified.empty()) {
    if (Status st = device_filter_available(); st) {
      p.devices = p.unified;
      p.devices_bpf = true;
    } else {
      why.devices_bpf = st.error().message;
    }
  }
  p.constrain_devices = !p.devices.empty();
  h.description_ = describe(p);
  h.limits_ = explain_limits(opts, p, why);
  return h;
}

Result<StepCgroup> StepCgroup::create(const CgroupPlan& plan, const std::string& rel_job, const std::string& rel_step,
                                      std::vector<std::string>& warnings) {
  StepCgroup cg;
  cg.memory_v2_ = plan.memory_v2;
  cg.cpuset_v2_ = plan.cpuset_v2;
  cg.devices_bpf_ = plan.devices_bpf;
  std::vector<std::string> v2_ctrls;
  if (plan.memory_v2) v2_ctrls.push_back("memory");
  if (plan.cpuset_v2) v2_ctrls.push_back("cpuset");
  const std::pair<const char*, const std::string*> roles[] = {
      {"memory", &plan.memory}, {"cpuset", &plan.cpuset}, {"devices", &plan.devices},
      {"freezer", &plan.freezer}, {"unified", &plan.unified}};
  std::set<std::string> seen;
  for (const auto& [role, base] : roles) {
    if (base->empty()) continue;
    const bool v1_cpuset = std::string(role) == "cpuset" && !plan.cpuset_v2;
    const bool v2_tree = *base == plan.unified;
    auto on_new = [&](const std::string& dir) {
      if (v1_cpuset) init_cpuset_v1(dir);
    };
    int failed = 0;
    Status st = make_dirs(*base, rel_job, on_new, &failed);
    // Agents of one host share the base; the last one of them to stop
    // removes it, and another may be about to use it: create it again. The
    // base may be back already (a third agent made it) when this one looks,
    // so any ENOENT tries again, not only a base that is missing now.
    for (int again = 0; again < 8 && !st && failed == ENOENT; ++again) {
      if (mkdir(base->c_str(), 0755) == 0 && v1_cpuset) init_cpuset_base_v1(*base);
      st = make_dirs(*base, rel_job, on_new, &failed);
    }
    std::string job_dir = *base + "/" + rel_job;
    if (st && v2_tree && !v2_ctrls.empty()) {
      // enable down to the job level so the step directory gets the controllers
      std::string path = *base;
      for (const auto& part : split(rel_job, '/')) {
        if (Status e = enable_subtree(path, v2_ctrls); !e) warnings.push_back(e.error().message);
        path += "/" + part;
      }
      if (Status e = enable_subtree(job_dir, v2_ctrls); !e) warnings.push_back(e.error().message);
    }
    if (st) st = make_dirs(job_dir, rel_step, on_new);
    if (!st) {
      warnings.push_back(st.error().message + " (" + role + " not enforced for this step)");
      continue;
    }
    std::string step_dir = job_dir + "/" + rel_step;
    cg.dirs_[role] = step_dir;
    cg.job_dirs_[role] = job_dir;
    if (seen.insert(step_dir).second) cg.procs_files_.push_back(step_dir + "/cgroup.procs");
  }
  return cg;
}

Status StepCgroup::limit_memory(int64_t mb, std::vector<std::string>& warnings) {
  auto it = dirs_.find("memory");
  if (it == dirs_.end() || mb <= 0) return {};
  const std::string bytes = std::to_string(mb * 1024 * 1024);
  for (const std::string& dir : {job_dirs_["memory"], it->second}) {
    if (memory_v2_) {
      if (Status st = write_text(dir + "/memory.max", bytes); !st) return st;
      if (access((dir + "/memory.swap.max").c_str(), F_OK) == 0) (void)write_text(dir + "/memory.swap.max", "0");
      continue;
    }
    if (Status st = write_text(dir + "/memory.limit_in_bytes", bytes); !st) return st;
    // memsw (RAM + swap) at the same value: the job cannot spill into swap.
    if (access((dir + "/memory.memsw.limit_in_bytes").c_str(), F_OK) == 0) {
      if (Status st = write_text(dir + "/memory.memsw.limit_in_bytes", bytes); !st) {
        warnings.push_back("swap not limited: " + st.error().message);
      }
    }
  }
  job_oom_baseline_ = 0;
  StepCgroup job_only;
  job_only.dirs_["memory"] = job_dirs_["memory"];
  job_only.memory_v2_ = memory_v2_;
  job_oom_baseline_ = job_only.oom_kills();
  return {};
}

Status StepCgroup::limit_cpus(const std::vector<int>& cpu_ids, std::vector<std::string>& warnings) {
  auto it = dirs_.find("cpuset");
  if (it == dirs_.end() || cpu_ids.empty()) return {};
  auto effective = read_text(job_dirs_["cpuset"] + (cpuset_v2_ ? "/cpuset.cpus.effective" : "/cpuset.effective_cpus"));
  std::set<int> present;
  if (effective) {
    for (const auto& item : split(std::string(trim(*effective)), ',')) {
      auto dash = item.find('-');
      auto lo = parse_int(item.substr(0, dash));
      auto hi = dash == std::string::npos ? lo : parse_int(item.substr(dash + 1));
      for (int64_t i = lo.value_or(0); lo && hi && i <= *hi; ++i) present.insert(static_cast<int>(i));
    }
  }
  std::string list;
  for (int id : cpu_ids) {
    if (!present.count(id)) {
      warnings.push_back("cores not confined: the allocation names CPU " + std::to_string(id) +
                         ", which this host does not have (an emulated node larger than the machine)");
      return {};
    }
    list += (list.empty() ? "" : ",") + std::to_string(id);
  }
  return write_text(it->second + "/cpuset.cpus", list);
}

bool StepCgroup::deny_devices(const std::vector<std::string>& deny, std::vector<std::string>& warnings) {
  auto it = dirs_.find("devices");
  if (it == dirs_.end()) return false;
  bool all = true;
  std::vector<DeviceRule> rules;
  for (const auto& file : deny) {
    auto rule = device_rule(file);
    if (!rule) {
      warnings.push_back("GPU " + file + " not isolated: " + rule.error().message);
      all = false;
    } else if (!devices_bpf_) {
      std::string text = std::string(1, rule->type) + " " + std::to_string(rule->major) + ":" +
                         std::to_string(rule->minor) + " rwm";
      if (Status s = write_text(it->second + "/devices.deny", text); !s) {
        warnings.push_back("GPU " + file + " not isolated: " + s.error().message);
        all = false;
      }
    } else {
      rules.push_back(*rule);
    }
  }
  if (!rules.empty()) {
    if (Status s = attach_device_filter(it->second, rules); !s) {
      for (const auto& r : rules) warnings.push_back("GPU " + r.file + " not isolated: " + s.error().message);
      all = false;
    }
  }
  return all;
}

namespace {

void collect_procs(const std::string& dir, std::set<pid_t>& out, int depth) {
  if (auto text = read_text(dir + "/cgroup.procs")) {
    std::istringstream in(*text);
    pid_t pid;
    while (in >> pid) out.insert(pid);
  }
  if (depth > 8) return;
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  while (dirent* e = readdir(d)) {
    if (e->d_type == DT_DIR && e->d_name[0] != '.') collect_procs(dir + "/" + e->d_name, out, depth + 1);
  }
  closedir(d);
}

}  // namespace

std::vector<pid_t> StepCgroup::members() const {
  std::set<pid_t> pids;
  std::set<std::string> seen;
  for (const auto& [role, dir] : dirs_) {
    if (seen.insert(dir).second) collect_procs(dir, pids, 0);
  }
  return {pids.begin(), pids.end()};
}

int StepCgroup::kill_all() const {
  std::set<pid_t> seen;
  for (pid_t pid : members()) seen.insert(pid);
  auto uni = dirs_.find("unified");
  if (uni != dirs_.end() && access((uni->second + "/cgroup.kill").c_str(), F_OK) == 0) {
    (void)write_text(uni->second + "/cgroup.kill", "1");
  }
  auto frz = dirs_.find("freezer");
  bool frozen = false;
  if (frz != dirs_.end() && write_text(frz->second + "/freezer.state", "FROZEN")) {
    frozen = true;
    for (int i = 0; i < 50; ++i) {  // up to ~100 ms for the freeze to settle
      auto st = read_text(frz->second + "/freezer.state");
      if (!st || trim(*st) == "FROZEN") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  // Only pids read now: frozen members cannot exit, so none is a recycled pid.
  for (pid_t pid : members()) {
    ::kill(pid, SIGKILL);
    seen.insert(pid);
  }
  if (frozen) (void)write_text(frz->second + "/freezer.state", "THAWED");
  return static_cast<int>(seen.size());
}

int64_t StepCgroup::oom_kills() const {
  auto read_count = [&](const std::string& dir) -> int64_t {
    auto text = read_text(dir + (memory_v2_ ? "/memory.events" : "/memory.oom_control"));
    if (!text) return 0;
    std::istringstream in(*text);
    std::string key;
    int64_t v = 0;
    while (in >> key >> v) {
      if (key == "oom_kill") return v;
    }
    return 0;
  };
  auto step = dirs_.find("memory");
  if (step == dirs_.end()) return 0;
  int64_t n = read_count(step->second);
  auto job = job_dirs_.find("memory");
  if (job != job_dirs_.end()) n += std::max<int64_t>(0, read_count(job->second) - job_oom_baseline_);
  return n;
}

void StepCgroup::remove() const {
  std::set<std::string> seen;
  for (const auto& [role, dir] : dirs_) {
    if (!seen.insert(dir).second) continue;
    for (int i = 0; i < 50 && rmdir(dir.c_str()) != 0 && errno == EBUSY; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // exiting tasks still leaving
    }
  }
  for (const auto& [role, dir] : job_dirs_) {
    if (seen.insert(dir).second) rmdir(dir.c_str());  // EBUSY while another step of the job runs: fine
  }
}

nlohmann::json StepCgroup::to_json() const {
  return {{"dirs", dirs_}, {"job_dirs", job_dirs_}, {"procs_files", procs_files_},
          {"memory_v2", memory_v2_}, {"cpuset_v2", cpuset_v2_}, {"devices_bpf", devices_bpf_},
          {"job_oom_baseline", job_oom_baseline_}};
}

StepCgroup StepCgroup::from_json(const nlohmann::json& j) {
  StepCgroup cg;
  if (!j.is_object()) return cg;
  cg.dirs_ = j.value("dirs", std::map<std::string, std::string>{});
  cg.job_dirs_ = j.value("job_dirs", std::map<std::string, std::string>{});
  cg.procs_files_ = j.value("procs_files", std::vector<std::string>{});
  cg.memory_v2_ = j.value("memory_v2", false);
  cg.cpuset_v2_ = j.value("cpuset_v2", false);
  cg.devices_bpf_ = j.value("devices_bpf", false);
  cg.job_oom_baseline_ = j.value("job_oom_baseline", int64_t{0});
  return cg;
}

}  // namespace drover::agent
