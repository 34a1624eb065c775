#include "agent/cgroup.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "agent/agent_test_util.hpp"
#include "agent/device_filter.hpp"
#include "common/strings.hpp"

namespace drover::agent {
namespace {

// A child that joins the step's cgroups and waits to be killed.
pid_t start_member(const StepCgroup& cg) {
  pid_t child = fork();
  if (child == 0) {
    for (const auto& f : cg.procs_files()) (void)write_text(f, "0");
    pause();
    _exit(0);
  }
  return child;
}

std::vector<pid_t> wait_members(const StepCgroup& cg) {
  std::vector<pid_t> members;
  for (int i = 0; i < 200 && members.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    members = cg.members();
  }
  return members;
}

void expect_killed(const StepCgroup& cg, pid_t child) {
  EXPECT_EQ(cg.kill_all(), 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

TEST(CgroupHost, DisabledSaysWhatIsLost) {
  CgroupOptions o;
  o.enabled = false;
  CgroupHost h = CgroupHost::probe(o);
  EXPECT_FALSE(h.plan().tracks());
  EXPECT_EQ(h.description(), "cgroups disabled by configuration");
  ASSERT_EQ(h.limits().size(), 1u);
  EXPECT_NE(h.limits()[0].find("memory limits, CPU confinement and GPU device isolation"), std::string::npos);
}

TEST(CgroupHost, SlurmPluginsChooseWhatIsConfined) {
  const std::string none = "task/none", both = "task/affinity, task/cgroup", linuxproc = "proctrack/linuxproc",
                    cg = "proctrack/cgroup";
  auto with = [](const std::string* task, const std::string* track) {
    CgroupOptions o;
    set_slurm_plugins(o, task, track);
    return o;
  };
  // Unwritten, or with task/cgroup among the plugins: Drover's default, everything confined.
  for (const auto& o : {with(nullptr, nullptr), with(&both, nullptr), with(&both, &linuxproc), with(nullptr, &cg)}) {
    EXPECT_TRUE(o.enabled && o.constrain_ram && o.constrain_cores && o.constrain_devices);
    EXPECT_EQ(o.off_because, "");
  }
  // task/none: nothing confined, but cgroups still track (proctrack/cgroup is the default).
  CgroupOptions o = with(&none, nullptr);
  EXPECT_TRUE(o.enabled);
  EXPECT_FALSE(o.constrain_ram || o.constrain_cores || o.constrain_devices);
  CgroupHost h = CgroupHost::probe(o);
  EXPECT_TRUE(h.plan().memory.empty() && h.plan().cpuset.empty() && h.plan().devices.empty());
  ASSERT_FALSE(h.limits().empty());
  EXPECT_EQ(h.limits()[0],
            "memory limits (--mem) and OUT_OF_MEMORY detection, CPU confinement (cores), GPU device isolation: off by "
            "configuration (TaskPlugin=task/none in slurm.conf)");
  // and with proctrack/linuxproc too (the anchor cluster's setting): no cgroup at all.
  o = with(&none, &linuxproc);
  EXPECT_FALSE(o.enabled);
  h = CgroupHost::probe(o);
  EXPECT_FALSE(h.plan().tracks());
  EXPECT_EQ(h.description(),
            "cgroups disabled by configuration (ProctrackType=proctrack/linuxproc and TaskPlugin=task/none in "
            "slurm.conf)");
  ASSERT_EQ(h.limits().size(), 1u);
  EXPECT_NE(h.limits()[0].find("through the process tree"), std::string::npos);
}

TEST(CgroupHost, EveryMissingPieceIsNamedOnce) {
  CgroupHost h = CgroupHost::probe(CgroupOptions{});
  const CgroupPlan& p = h.plan();
  const std::pair<bool, const char*> expect[] = {
      {p.memory.empty(), "memory limits"}, {p.cpuset.empty(), "CPU confinement"},
      {p.devices.empty(), "GPU device isolation"}, {!p.tracks(), "process tracking"}};
  for (const auto& [missing, prefix] : expect) {
    int n = 0;
    for (const auto& l : h.limits()) n += l.rfind(prefix, 0) == 0 ? 1 : 0;
    EXPECT_EQ(n, missing ? 1 : 0) << prefix << " in: " << h.description();
  }
  EXPECT_FALSE(h.description().empty());
}

// A real step cgroup: limit, attach, list, kill, OOM counter, remove.
TEST(StepCgroup, LimitAttachKillRemove) {
  CgroupHost h = CgroupHost::probe(CgroupOptions{});
  if (h.plan().memory.empty()) GTEST_SKIP() << "no usable memory cgroup: " << h.description();
  std::vector<std::string> warnings;
  const std::string node = testing::unique_node();
  auto cg = StepCgroup::create(h.plan(), node + "/job_1", "step_0", warnings);
  ASSERT_TRUE(cg.ok()) << cg.error().message;
  ASSERT_TRUE(cg->limit_memory(64, warnings).ok());
  const std::string mem_dir = cg->to_json()["dirs"]["memory"];
  auto limit = read_text(mem_dir + (h.plan().memory_v2 ? "/memory.max" : "/memory.limit_in_bytes"));
  ASSERT_TRUE(limit.ok());
  EXPECT_EQ(std::stoll(*limit), 64ll << 20);
  pid_t child = start_member(*cg);
  std::vector<pid_t> members = wait_members(*cg);
  EXPECT_EQ(members, std::vector<pid_t>{child});
  expect_killed(*cg, child);
  EXPECT_EQ(cg->oom_kills(), 0);
  cg->remove();
  EXPECT_NE(access(mem_dir.c_str(), F_OK), 0) << "step directory removed";
  for (const std::string* base : {&h.plan().memory, &h.plan().cpuset, &h.plan().devices, &h.plan().freezer,
                                  &h.plan().unified}) {
    if (!base->empty()) rmdir((*base + "/" + node).c_str());
  }
  auto back = StepCgroup::from_json(cg->to_json());
  EXPECT_EQ(back.to_json(), cg->to_json());
}

// A step's v1 cpuset directories start with their parent's CPUs and memory
// nodes (a task could not join an empty cpuset), and the v1 freezer is used
// only where the v2 tree cannot kill a cgroup whole.
TEST(StepCgroup, NewCpusetsAreUsableAndFreezerOnlyWithoutCgroupKill) {
  CgroupHost h = CgroupHost::probe(CgroupOptions{});
  const CgroupPlan& p = h.plan();
  const bool v2_kills = !p.unified.empty() && access((p.unified + "/cgroup.kill").c_str(), F_OK) == 0;
  EXPECT_EQ(p.freezer.empty(), v2_kills || access((CgroupOptions{}.mount_root + "/freezer").c_str(), F_OK) != 0)
      << h.description();
  if (p.cpuset.empty() || p.cpuset_v2) GTEST_SKIP() << "no v1 cpuset: " << h.description();
  std::vector<std::string> warnings;
  const std::string node = testing::unique_node();
  auto cg = StepCgroup::create(p, node + "/job_1", "step_0", warnings);
  ASSERT_TRUE(cg.ok()) << cg.error().message;
  const std::string step_dir = cg->to_json()["dirs"]["cpuset"];
  for (const char* f : {"/cpuset.cpus", "/cpuset.mems"}) {
    auto base = read_text(p.cpuset + f), step = read_text(step_dir + f);
    ASSERT_TRUE(base.ok() && step.ok());
    EXPECT_EQ(trim(*step), trim(*base)) << f;
  }
  pid_t child = start_member(*cg);
  std::vector<pid_t> members = wait_members(*cg);
  EXPECT_EQ(members, std::vector<pid_t>{child}) << "the task joined the new cpuset";
  expect_killed(*cg, child);
  cg->remove();
  for (const std::string* base : {&p.memory, &p.cpuset, &p.devices, &p.freezer, &p.unified}) {
    if (!base->empty()) rmdir((*base + "/" + node).c_str());
  }
}

// A step denied a device cannot open it and can still open the others:
// through the v1 devices controller where this host has one, and through the
// cgroup v2 BPF device filter (what a pure v2 host gets), forced here on the
// v2 tree. /dev/null stands for a GPU not given to the step.
TEST(StepCgroup, DeniedDevicesCannotBeOpenedThroughV1OrTheV2Filter) {
  CgroupHost h = CgroupHost::probe(CgroupOptions{});
  std::vector<std::pair<std::string, CgroupPlan>> plans;
  if (!h.plan().devices.empty()) plans.emplace_back(h.plan().devices_bpf ? "v2 filter" : "v1 devices", h.plan());
  if (!h.plan().unified.empty() && !h.plan().devices_bpf) {
    if (Status st = device_filter_available(); st) {
      CgroupPlan bpf = h.plan();
      bpf.devices = bpf.unified;
      bpf.devices_bpf = true;
      plans.emplace_back("v2 filter", bpf);
    } else {
      std::printf("no v2 device filter here: %s\n", st.error().message.c_str());
    }
  }
  if (plans.empty()) GTEST_SKIP() << "no device isolation on this host: " << h.description();
  for (const auto& [how, plan] : plans) {
    std::printf("checking isolation through the %s\n", how.c_str());
    SCOPED_TRACE(how);
    std::vector<std::string> warnings;
    const std::string node = testing::unique_node();
    auto cg = StepCgroup::create(plan, node + "/job_1", "step_0", warnings);
    ASSERT_TRUE(cg.ok()) << cg.error().message;
    EXPECT_TRUE(cg->deny_devices({"/dev/null"}, warnings)) << join(warnings, "; ");
    std::vector<std::string> bad;
    EXPECT_FALSE(cg->deny_devices({"/etc/hostname"}, bad));
    ASSERT_EQ(bad.size(), 1u);
    EXPECT_EQ(bad[0], "GPU /etc/hostname not isolated: /etc/hostname: not a device file");
    pid_t child = fork();
    if (child == 0) {
      for (const auto& f : cg->procs_files()) (void)write_text(f, "0");
      int denied = open("/dev/null", O_RDWR);
      int denied_errno = errno;
      int allowed = open("/dev/zero", O_RDONLY);
      _exit(denied < 0 && denied_errno == EPERM && allowed >= 0 ? 0 : 1 + (denied >= 0) * 2 + (allowed < 0) * 4);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "exit " << WEXITSTATUS(status) << " (3: /dev/null opened; 5: /dev/zero refused)";
    auto back = StepCgroup::from_json(cg->to_json());
    EXPECT_EQ(back.to_json(), cg->to_json());
    cg->remove();
    for (const std::string* base : {&plan.memory, &plan.cpuset, &plan.devices, &plan.freezer, &plan.unified}) {
      if (!base->empty()) rmdir((*base + "/" + node).c_str());
    }
  }
  // Outside any such cgroup the device opens as before.
  int fd = open("/dev/null", O_RDWR);
  EXPECT_GE(fd, 0);
  close(fd);
}

}  // namespace
}  // namespace drover::agent
