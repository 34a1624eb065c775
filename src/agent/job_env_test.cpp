#include "agent/job_env.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <set>

#include "agent/agent_test_util.hpp"

namespace drover::agent {
namespace {

using testing::parse_env_lines;
using testing::slurp;

TEST(CompressCounts, SlurmForms) {
  struct Case {
    std::vector<int> in;
    std::string want;
  };
  std::vector<int> thirty_fours(30, 4);
  thirty_fours.push_back(2);
  const Case cases[] = {
      {{}, ""},          {{1}, "1"},          {{1, 1}, "1(x2)"},          {thirty_fours, "4(x30),2"},
      {{72, 72, 36}, "72(x2),36"}, {{2, 1, 2}, "2,1,2"}, {{3, 3, 3, 1, 1}, "3(x3),1(x2)"},
  };
  for (const auto& c : cases) EXPECT_EQ(compress_counts(c.in), c.want);
}

TEST(ResolveExport, Semantics) {
  const std::vector<std::string> env = {"HOME=/home/a", "PATH=/bin", "SLURM_CONF=/etc/s.conf", "OMP=4", "EMPTY="};
  struct Case {
    std::string spec;
    std::vector<std::string> want;
  };
  const Case cases[] = {
      {"ALL", env},
      {"", env},
      {"NONE", {"SLURM_CONF=/etc/s.conf"}},
      {"ALL,OMP=8,NEW=x", {"HOME=/home/a", "PATH=/bin", "SLURM_CONF=/etc/s.conf", "EMPTY=", "OMP=8", "NEW=x"}},
      {"PATH,OMP", {"SLURM_CONF=/etc/s.conf", "PATH=/bin", "OMP=4"}},
      {"PATH,MISSING,X=1", {"SLURM_CONF=/etc/s.conf", "PATH=/bin", "X=1"}},
      {"none", {"SLURM_CONF=/etc/s.conf"}},
  };
  for (const auto& c : cases) {
    auto got = resolve_export(env, c.spec);
    ASSERT_TRUE(got.ok()) << c.spec << ": " << got.error().message;
    EXPECT_EQ(*got, c.want) << "--export=" << c.spec;
  }
}

TEST(ResolveExport, ErrorsNameTheItem) {
  auto bad = resolve_export({}, "ALL,=v");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("'=v'"), std::string::npos) << bad.error().message;
  auto both = resolve_export({}, "ALL,NONE");
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.error().message.find("ALL and NONE"), std::string::npos);
}

// ---- real Slurm 22.05 job environments (shared/anchors/slurm/golden/env_*.txt) ----

// Variables Slurm set that Drover deliberately does not reproduce here.
const std::map<std::string, std::string> kRunSpecific = {
    {"SLURM_TASK_PID", "the pid of that run's task; the launch tests check it against the task's own $$"},
    {"SHLVL", "shell nesting level: depends on the shells that ran sbatch and the script, not on the job"},
};

struct GoldenCase {
  std::string file;
  bool all_vars;  // compare every variable, not only SLURM_*/CUDA_*
  std::function<LaunchRequest()> build;
};

LaunchRequest anchor_job(uint64_t id, const std::string& name, const std::string& partition, const std::string& node) {
  LaunchRequest r;
  r.job.job_id = id;
  r.key.job_id = id;
  r.job.job_name = name;
  r.job.user = "alice";
  r.job.uid = 2001;
  r.job.gid = 2001;
  r.job.account = "research";
  r.job.partition = partition;
  r.job.qos = "normal";
  r.job.cluster_name = "anchor";
  r.job.working_cluster = "anchor:localhost:6817:9728:109";  // the controller's settings (ctld/settings.cpp)
  r.job.submit_dir = "/home/alice/golden-work";
  r.job.submit_host = "vm";
  r.job.nodes = {node};
  r.job.cpus_per_node = {1};
  r.job.tasks_per_node = {1};
  r.job.mem_per_cpu_mb = 4096;  // DefMemPerCPU=4096 in the anchor's slurm.conf
  r.job.conf_path = "/etc/slurm/slurm.conf";
  r.alloc.node_name = node;
  r.alloc.cpus = 1;
  r.script = "#!/bin/sh\nenv\n";
  return r;
}

std::vector<GpuDevice> gpus(std::vector<int> idx) {
  std::vector<GpuDevice> out;
  for (int i : idx) out.push_back({i, "/tmp/fakegpu/nvidia" + std::to_string(i)});
  return out;
}

const std::vector<GoldenCase>& golden_cases() {
  static const std::vector<GoldenCase> cases = {
      {"env_batch_gpu_gres2.txt", false,
       [] {
         auto r = anchor_job(93, "env-gpu", "training", "gpu01");
         r.alloc.gpus = gpus({0, 1});
         return r;
       }},
      {"env_batch_gpu_gres2_full.txt", true,
       [] {
         auto r = anchor_job(94, "env-gpu-full", "training", "gpu01");
         r.alloc.gpus = gpus({0, 1});
         // What sbatch captured: capture_golden.sh's `env -i ... bash -c "cd $W && sbatch ..."`.
         r.job.submit_env = {"HOME=/home/alice", "USER=alice", "LOGNAME=alice", "SHELL=/bin/bash",
                             "PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "PWD=/home/alice/golden-work",
                             "OLDPWD=/home/alice", "SHLVL=1", "_=/usr/bin/sbatch"};
         return r;
       }},
      {"env_batch_cpu_cpt4.txt", false,
       [] {
         auto r = anchor_job(95, "env-cpu", "compute", "cpu01");
         r.job.cpus_per_node = {4};
         r.job.cpus_per_task = 4;
         r.alloc.cpus = 4;
         return r;
       }},
      {"env_batch_array_elem0.txt", false,
       [] {
         auto r = anchor_job(97, "env-array", "compute", "cpu01");
         r.job.array = ArrayInfo{96, 0, 3, 0, 2, 1};
         return r;
       }},
      {"env_batch_array_elem1.txt", false,
       [] {
         auto r = anchor_job(98, "env-array", "compute", "cpu01");
         r.job.array = ArrayInfo{96, 1, 3, 0, 2, 1};
         return r;
       }},
      {"env_batch_gpus2.txt", false,
       [] {
         auto r = anchor_job(99, "env-gpus", "training", "gpu01");
         r.job.gpus_opt = "2";
         r.alloc.gpus = gpus({0, 1});
         return r;
       }},
      {"env_batch_2node_a100.txt", false,
       [] {
         auto r = anchor_job(100, "env-2node", "training", "gpu03");
         r.job.nodes = {"gpu03", "gpu04"};
         r.job.cpus_per_node = {1, 1};
         r.job.tasks_per_node = {1, 1};
         r.job.ntasks = 2;
         r.job.ntasks_per_node = 1;
         r.alloc.gpus = gpus({0});
         return r;
       }},
      {"env_srun_gpu1.txt", false,
       [] {
         auto r = anchor_job(101, "srun-env", "interactive", "gpu01");
         r.key.step_id = 0;
         r.script.clear();
         r.argv = {"bash", "-c", "env"};
         r.layout.nodes = {"gpu01"};
         r.layout.tasks_per_node = {1};
         r.layout.node_index = 0;
         r.layout.global_task_ids = {0};
         r.layout.launcher_host = "127.0.0.1";
         r.layout.launcher_port = 40011;
         r.layout.umask = 0022;
         r.alloc.gpus = gpus({0});
         return r;
       }},
  };
  return cases;
}

// The variables of a golden file: lines between the header ("$ ...", "# job ...") and "[exit".
std::map<std::string, std::string> golden_env(const std::string& file) {
  std::string text = slurp(std::string(DROVER_SOURCE_DIR) + "/src/agent/testdata/slurm_golden/" + file);
  std::string body;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("$ ", 0) == 0 || line.rfind("# ", 0) == 0 || line.rfind("[exit", 0) == 0) continue;
    body += line + "\n";
  }
  return parse_env_lines(body);
}

bool compared(const std::string& name, bool all_vars) {
  return all_vars || name.rfind("SLURM", 0) == 0 || name.rfind("CUDA", 0) == 0;
}

TEST(GoldenEnv, MatchesRealSlurm) {
  for (const auto& c : golden_cases()) {
    SCOPED_TRACE(c.file);
    auto want = golden_env(c.file);
    ASSERT_GT(want.size(), 20u) << "golden file missing or empty: " << c.file;
    LaunchRequest r = c.build();
    ASSERT_TRUE(validate(r).ok()) << validate(r).error().message;
    auto got = build_task_env(r, TaskPlace{0, 0}, /*devices_constrained=*/false);
    ASSERT_TRUE(got.ok()) << got.error().message;
    for (const auto& [k, v] : want) {
      if (kRunSpecific.count(k) || !compared(k, c.all_vars)) continue;
      auto it = got->find(k);
      if (it == got->end()) {
        ADD_FAILURE() << k << " is missing (Slurm: " << k << "=" << v << ")";
        continue;
      }
      EXPECT_EQ(it->second, v) << k;
    }
    // Nothing Slurm did not set, except Drover's own config variable.
    for (const auto& [k, v] : *got) {
      if (k == "DROVER_CONF" || !compared(k, c.all_vars)) continue;
      EXPECT_TRUE(want.count(k)) << "Drover sets " << k << "=" << v << ", Slurm did not";
    }
  }
}

TEST(GoldenEnv, DevicesConstrainedRenumbersCudaButNotSlurmIds) {
  LaunchRequest r = golden_cases()[0].build();
  r.alloc.gpus = gpus({2, 5});
  auto env = build_task_env(r, TaskPlace{0, 0}, /*devices_constrained=*/true);
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->at("CUDA_VISIBLE_DEVICES"), "0,1");
  EXPECT_EQ(env->at("GPU_DEVICE_ORDINAL"), "0,1");
  EXPECT_EQ(env->at("SLURM_JOB_GPUS"), "2,5");
  auto plain = build_task_env(r, TaskPlace{0, 0}, false);
  EXPECT_EQ(plain->at("CUDA_VISIBLE_DEVICES"), "2,5");
}

TEST(StepEnv, PerTaskAndStepVariables) {
  LaunchRequest r = golden_cases().back().build();
  r.job.nodes = {"n1", "n2", "n3", "n4"};
  r.job.cpus_per_node = {8, 8, 8, 8};
  r.job.tasks_per_node = {4, 4, 4, 2};
  r.layout.nodes = {"n2", "n3", "n4"};
  r.layout.tasks_per_node = {4, 4, 2};
  r.layout.node_index = 1;
  r.layout.global_task_ids = {4, 5, 6, 7};
  r.alloc.node_name = "n3";
  r.alloc.gpus = gpus({4, 5, 6, 7});
  auto env = build_task_env(r, TaskPlace{6, 2}, false);
  ASSERT_TRUE(env.ok());
  const std::map<std::string, std::string> want = {
      {"SLURM_PROCID", "6"},          {"SLURM_LOCALID", "2"},
      {"SLURM_NODEID", "1"},          {"SLURM_GTIDS", "4,5,6,7"},
      {"SLURM_STEP_ID", "0"},         {"SLURM_STEPID", "0"},
      {"SLURM_STEP_NODELIST", "n[2-4]"}, {"SLURM_STEP_NUM_NODES", "3"},
      {"SLURM_NNODES", "3"},          {"SLURM_JOB_NUM_NODES", "4"},
      {"SLURM_STEP_NUM_TASKS", "10"}, {"SLURM_NTASKS", "10"},
      {"SLURM_STEP_TASKS_PER_NODE", "4(x2),2"}, {"SLURM_TASKS_PER_NODE", "4(x2),2"},
      {"SLURM_JOB_NODELIST", "n[1-4]"}, {"SLURM_JOB_CPUS_PER_NODE", "8(x4)"},
      {"SLURM_STEP_GPUS", "4,5,6,7"}, {"CUDA_VISIBLE_DEVICES", "4,5,6,7"},
      {"SLURMD_NODENAME", "n3"},      {"SLURM_GPUS_ON_NODE", "4"},
  };
  for (const auto& [k, v] : want) EXPECT_EQ(env->count(k) ? env->at(k) : "<unset>", v) << k;
  EXPECT_EQ(env->count("SLURM_JOB_GPUS"), 0u) << "SLURM_JOB_GPUS is for batch and interactive jobs only";
}

// Each task's GPUs under the step's --gpu-bind, as Slurm 22.05 bound them on
// the anchor cluster (srun --gpu-bind=per_task:2 over GPUs 4-7: task 1 got 6,7).
TEST(StepEnv, GpuBindGivesEachTaskItsOwnGpus) {
  LaunchRequest r = golden_cases().back().build();
  r.layout.tasks_per_node = {2};
  r.layout.global_task_ids = {0, 1};
  r.alloc.gpus = gpus({4, 5, 6, 7});
  r.layout.gpu_bind = "per_task:2";
  auto env = build_task_env(r, TaskPlace{1, 1}, false);
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->at("CUDA_VISIBLE_DEVICES"), "6,7");
  EXPECT_EQ(env->at("ZE_AFFINITY_MASK"), "6,7");
  EXPECT_EQ(env->at("SLURM_STEP_GPUS"), "6,7");
  EXPECT_EQ(env->at("SLURM_GPUS_ON_NODE"), "4") << "the node's count stays the step's";
  EXPECT_EQ(env->at("SLURMD_TRES_BIND"), "gpu:per_task:2");
  auto confined = build_task_env(r, TaskPlace{1, 1}, true);
  EXPECT_EQ(confined->at("CUDA_VISIBLE_DEVICES"), "2,3") << "numbered within the step's devices";
  EXPECT_EQ(confined->at("SLURM_STEP_GPUS"), "6,7");
  r.layout.gpu_bind = "none";
  r.job.submit_env = {"CUDA_VISIBLE_DEVICES=4,5,6,7", "SLURM_JOB_GPUS=4,5,6,7"};  // srun's, inside the batch job
  auto none = build_task_env(r, TaskPlace{0, 0}, false);
  EXPECT_EQ(none->count("CUDA_VISIBLE_DEVICES"), 0u) << "--gpu-bind=none names no GPU";
  EXPECT_EQ(none->count("SLURM_STEP_GPUS"), 0u);
  EXPECT_EQ(none->at("SLURMD_TRES_BIND"), "gpu:none");
  EXPECT_EQ(none->at("SLURM_JOB_GPUS"), "4,5,6,7") << "the job's GPUs stay named";
  r.job.submit_env.clear();
  r.layout.gpu_bind.clear();
  auto unbound = build_task_env(r, TaskPlace{1, 1}, false);
  EXPECT_EQ(unbound->at("CUDA_VISIBLE_DEVICES"), "4,5,6,7");
  EXPECT_EQ(unbound->count("SLURMD_TRES_BIND"), 0u);
  r.layout.gpu_bind = "map_gpu:1,0";
  std::string why;
  EXPECT_EQ(task_gpu_positions(r, 0, false, &why), (std::vector<std::size_t>{0}));
  EXPECT_NE(why.find("does not specify any devices within the allocation for task 0"), std::string::npos) << why;
}

TEST(StepEnv, DistributionAndPackGroupInsideAnAllocation) {
  LaunchRequest r = golden_cases().back().build();
  // srun -p training --gpus=2 --gpus-per-task=1 making its own allocation: Slurm 22.05 gave its tasks
  // neither SLURM_GPUS nor SLURM_GPUS_PER_TASK (inside a batch job they come with srun's environment).
  r.job.gpus_opt = "2";
  r.job.gpus_per_task_opt = "1";
  r.layout.gpus_opt = "2";
  auto own = build_task_env(r, TaskPlace{0, 0}, false);
  EXPECT_EQ(own->count("SLURM_GPUS"), 0u);
  EXPECT_EQ(own->count("SLURM_GPUS_PER_TASK"), 0u);
  auto outside = build_task_env(r, TaskPlace{0, 0}, false);
  EXPECT_EQ(outside->count("SLURM_DISTRIBUTION"), 0u) << "srun outside an allocation, without -m";
  EXPECT_EQ(outside->count("SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0"), 0u);
  r.job.cpus_per_node = {3, 1};
  r.layout.in_allocation = true;
  r.layout.show_distribution = true;
  r.layout.distribution = "block";
  auto inside = build_task_env(r, TaskPlace{0, 0}, false);
  EXPECT_EQ(inside->at("SLURM_DISTRIBUTION"), "block");
  EXPECT_EQ(inside->at("SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0"), "3,1");
  r.layout.distribution = "plane=2";
  auto plane = build_task_env(r, TaskPlace{0, 0}, false);
  EXPECT_EQ(plane->at("SLURM_DISTRIBUTION"), "plane");
  EXPECT_EQ(plane->at("SLURM_DIST_PLANESIZE"), "2");
}

TEST(JobEnv, TasksPerNodeWithoutATaskCountFollowTheCpus) {
  LaunchRequest r = golden_cases()[0].build();
  r.job.cpus_per_node = {8};
  r.alloc.cpus = 8;
  auto env = build_task_env(r, TaskPlace{0, 0}, false);
  EXPECT_EQ(env->at("SLURM_TASKS_PER_NODE"), "8") << "--mincpus=8 on the anchor";
  r.job.ntasks = 1;
  env = build_task_env(r, TaskPlace{0, 0}, false);
  EXPECT_EQ(env->at("SLURM_TASKS_PER_NODE"), "1") << "-n 1 keeps its one task";
}

TEST(JobEnv, ExportedVariablesAndSlurmOverrides) {
  LaunchRequest r = golden_cases()[0].build();
  r.job.submit_env = {"SLURM_JOB_ID=1", "MYVAR=keep", "TMPDIR=/scratch"};
  r.job.export_spec = "ALL";
  auto env = build_task_env(r, TaskPlace{0, 0}, false);
  ASSERT_TRUE(env.ok());
  EXPECT_EQ(env->at("SLURM_JOB_ID"), "93") << "the job's own id wins over a submitted one";
  EXPECT_EQ(env->at("MYVAR"), "keep");
  EXPECT_EQ(env->at("TMPDIR"), "/scratch") << "TMPDIR is set only when the job has none";
  EXPECT_EQ(env->count("SLURM_GET_USER_ENV"), 0u);
  const std::vector<std::string> login = {"HOME=/home/alice", "PATH=/usr/local/bin:/usr/bin:/bin", "MYVAR=login"};
  auto all = build_task_env(r, TaskPlace{0, 0}, false, login);
  EXPECT_EQ(all->count("HOME"), 0u) << "with ALL the login environment is not loaded";
  r.job.export_spec = "NONE";
  auto none = build_task_env(r, TaskPlace{0, 0}, false, login);
  EXPECT_EQ(none->at("MYVAR"), "login") << "NONE: the submitted MYVAR is dropped, the login one stays";
  EXPECT_EQ(none->at("HOME"), "/home/alice");
  EXPECT_EQ(none->at("SLURM_EXPORT_ENV"), "NONE");
  EXPECT_EQ(none->at("SLURM_GET_USER_ENV"), "1");
  EXPECT_EQ(none->at("TMPDIR"), "/tmp");
  r.job.export_spec = "MYVAR,EXTRA=1";
  auto named = build_task_env(r, TaskPlace{0, 0}, false, login);
  EXPECT_EQ(named->at("MYVAR"), "keep") << "a named variable comes from the submitter";
  EXPECT_EQ(named->at("EXTRA"), "1");
  EXPECT_EQ(named->at("PATH"), "/usr/local/bin:/usr/bin:/bin");
}

TEST(JobEnv, WhichExportsLoadTheLoginEnvironment) {
  EXPECT_FALSE(export_loads_login_env(""));
  EXPECT_FALSE(export_loads_login_env("ALL"));
  EXPECT_FALSE(export_loads_login_env("all,K=v"));
  EXPECT_TRUE(export_loads_login_env("NONE"));
  EXPECT_TRUE(export_loads_login_env("K1,K2=v"));
}

}  // namespace
}  // namespace drover::agent
