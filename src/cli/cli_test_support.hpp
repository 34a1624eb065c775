// Test support (included by *_test.cpp only): reading the real-Slurm golden
// files, a fixed time zone, and the anchor cluster's jobs and nodes rebuilt as
// views from what the golden files show.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>

#include <vector>

#include "cli/views.hpp"
#include "common/gres.hpp"

namespace drover::cli::test {

// A golden file: "$ <command>", the output, "[exit N]".
struct Golden {
  std::string command;  // without "$ "
  std::string output;   // everything between the first and the last line
  int exit_code = 0;
};

inline std::string golden_dir() {
  if (const char* d = std::getenv("DROVER_GOLDEN_DIR")) return d;
  return std::string(DROVER_SOURCE_DIR) + "/src/cli/testdata/slurm-22.05";
}

inline Golden read_golden(const std::string& name) {
  std::ifstream in(golden_dir() + "/" + name);
  EXPECT_TRUE(in.good()) << "missing golden file " << golden_dir() << "/" << name;
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  Golden g;
  auto first_nl = text.find('\n');
  g.command = text.substr(2, first_nl - 2);
  auto exit_pos = text.rfind("[exit ");
  g.output = text.substr(first_nl + 1, exit_pos - first_nl - 1);
  g.exit_code = std::atoi(text.c_str() + exit_pos + 6);
  return g;
}

// Splits a golden's command line like a POSIX shell would for the simple
// quoting the goldens use ('...' and "..."); drops the program name.
inline std::vector<std::string> golden_args(const std::string& command) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (char c : command) {
    if (quote) {
      if (c == quote) quote = 0; else word += c;
    } else if (c == '"' || c == '\'') {
      quote = c;
      in_word = true;
    } else if (c == ' ') {
      if (in_word) words.push_back(word);
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  if (!words.empty()) words.erase(words.begin());
  return words;
}

// A test-name-safe form of any text ("squeue_l.txt" -> "squeue_l").
inline std::string test_name(std::string s) {
  if (s.size() > 4 && s.substr(s.size() - 4) == ".txt") s.resize(s.size() - 4);
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

// The goldens were captured on a machine whose local time we treat as UTC.
inline void use_utc() {
  setenv("TZ", "UTC", 1);
  tzset();
}

// "2026-11-29T21:51:38" read as UTC.
inline UnixTime utc(const std::string& s) {
  std::tm tm{};
  strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  return static_cast<UnixTime>(timegm(&tm));
}

// ---- the anchor cluster's queue at 2026-11-29T21:52:13 ----------------------
//
// Rebuilt from squeue_*.txt, scontrol_show_job_*.txt and sprio*.txt. Running
// jobs' start times follow from their TIME column at kAnchorNow. Priorities
// of pending jobs are sprio's; those sprio does not list (held, dependent,
// begin-time, array) and those of running jobs are chosen to reproduce
// squeue's "P,t,-p" order. Jobs of equal priority keep this vector's order,
// as Slurm keeps the controller's list order.

inline UnixTime anchor_now() { return utc("2026-11-29T21:52:13"); }

inline JobView anchor_job(int64_t id, const char* part, const char* name, JobState st, Seconds limit,
                          int64_t prio, const char* nodes_or_reason, Seconds ran = 0) {
  JobView j;
  j.job_id = id;
  j.partition = part;
  j.name = name;
  j.user = "alice";
  j.uid = 2001;
  j.group = "alice";
  j.gid = 2001;
  j.account = "research";
  j.qos = "normal";
  j.state = st;
  j.time_limit = limit;
  j.priority = prio;
  j.submit_time = utc("2026-11-29T21:51:30");
  j.work_dir = "/home/alice/golden-work";
  j.std_in = j.std_out = j.std_err = "/dev/null";
  if (st == JobState::kPending) {
    j.reason = nodes_or_reason;
  } else {
    j.nodes = j.batch_host = nodes_or_reason;
    j.start_time = anchor_now() - ran;
    j.end_time = j.start_time + limit;
  }
  return j;
}

inline JobView anchor_array_element(int64_t id, int64_t task, Seconds ran) {
  JobView j = anchor_job(id, "compute", "array-thr", JobState::kRunning, 600, 5980 - task * 10, "cpu01", ran);
  j.array_job_id = 117;
  j.array_task_id = task;
  j.array_max_running = 2;
  return j;
}

inline std::vector<JobView> anchor_jobs() {
  constexpr Seconds kWeek = 7 * 86400, kHour = 3600;
  using S = JobState;
  std::vector<JobView> v;
  v.push_back(anchor_job(109, "training", "train-wait2", S::kPending, kHour, 7641, "Priority"));
  v.push_back(anchor_job(108, "training", "train-wait", S::kPending, kHour, 7641, "Resources"));
  v.back().start_time = utc("2026-11-29T22:51:38");
  v.back().sched_nodes = "gpu04";
  v[0].start_time = utc("2026-11-29T23:51:00");
  v[0].sched_nodes = "gpu04";
  v.push_back(anchor_job(116, "compute", "begin-later", S::kPending, kWeek, 6500, "BeginTime"));
  v.back().start_time = utc("2026-11-29T22:51:38");
  v.push_back(anchor_job(114, "compute", "dep-wait", S::kPending, kWeek, 6300, "Dependency"));
  v.push_back(anchor_job(115, "compute", "held", S::kPending, kWeek, 0, "JobHeldUser"));
  v.push_back(anchor_job(120, "compute", "never-time", S::kPending, 8 * 86400, 6393, "PartitionTimeLimit"));
  v.push_back(anchor_job(121, "interactive", "never-itime", S::kPending, 5 * kHour, 6390, "PartitionTimeLimit"));
  v.push_back(anchor_job(122, "training", "never-qoswall", S::kPending, 5 * kHour, 14547,
                         "QOSMaxWallDurationPerJobLimit"));
  v.push_back(anchor_job(126, "compute", "never-nodes", S::kPending, kWeek, 6633, "PartitionNodeLimit"));
  v.back().num_nodes = 5;
  JobView array = anchor_job(117, "compute", "array-thr", S::kPending, 600, 6450, "JobArrayTaskLimit");
  array.array_job_id = 117;
  array.array_pending_tasks = {2, 3, 4, 5, 6, 7, 8, 9};
  array.array_max_running = 2;
  v.push_back(array);
  v.push_back(anchor_job(103, "compute", "parsable", S::kRunning, 2 * kHour, 5900, "cpu01", 38));
  v.push_back(anchor_job(104, "training", "train-full1", S::kRunning, 2 * kHour, 8000, "gpu01", 38));
  v.push_back(anchor_job(105, "training", "train-full2", S::kRunning, 2 * kHour, 7990, "gpu02", 38));
  v.push_back(anchor_job(106, "training", "train-full3", S::kRunning, 2 * kHour, 7980, "gpu03", 38));
  v.push_back(anchor_job(107, "training", "train-gpu2", S::kRunning, kHour, 6703, "gpu04", 35));
  v.push_back(anchor_job(110, "training", "train-bf", S::kRunning, 30 * 60, 7000, "gpu04", 31));
  v.push_back(anchor_job(111, "compute", "cpu-run1", S::kRunning, 3 * kHour, 6000, "cpu01", 32));
  v.push_back(anchor_job(112, "compute", "cpu-run2", S::kRunning, 3 * kHour, 5990, "cpu01", 32));
  v.push_back(anchor_job(113, "highmem", "hm-run", S::kRunning, kWeek, 5000, "hm01", 32));
  v.push_back(anchor_array_element(118, 0, 32));
  v.push_back(anchor_array_element(119, 1, 32));
  return v;
}

// ---- the anchor cluster's partitions and nodes ---------------------------------

inline std::vector<PartitionView> anchor_partitions() {
  auto part = [](const char* name, const char* nodes, std::vector<std::string> names, Seconds max_time) {
    PartitionView p;
    p.name = name;
    p.nodes = nodes;
    p.node_names = std::move(names);
    p.max_time = max_time;
    p.total_nodes = static_cast<int64_t>(p.node_names.size());
    return p;
  };
  std::vector<std::string> gpus{"gpu01", "gpu02", "gpu03", "gpu04"}, cpus{"cpu01", "cpu02", "cpu03", "cpu04"};
  std::vector<std::string> both = cpus;
  both.insert(both.end(), gpus.begin(), gpus.end());
  std::vector<PartitionView> v;
  v.push_back(part("training", "gpu[01-04]", gpus, kInfinite));
  v.back().total_cpus = 512;
  v.back().tres = {{"cpu", 512}, {"mem", 4000000}, {"node", 4}, {"billing", 512}, {"gres/gpu", 32},
                   {"gres/gpu:a100", 16}, {"gres/gpu:h100", 16}};
  v.push_back(part("compute", "cpu[01-04]", cpus, 7 * 86400));
  v.back().is_default = true;
  v.back().total_cpus = 256;
  v.back().tres = {{"cpu", 256}, {"mem", 1024000}, {"node", 4}, {"billing", 256}};
  v.push_back(part("interactive", "cpu[01-04],gpu[01-04]", both, 4 * 3600));
  v.back().default_time = 3600;
  v.back().total_cpus = 768;
  v.back().tres = {{"cpu", 768}, {"mem", 5024000}, {"node", 8}, {"billing", 768}, {"gres/gpu", 32},
                   {"gres/gpu:a100", 16}, {"gres/gpu:h100", 16}};
  v.push_back(part("highmem", "hm01", {"hm01"}, 7 * 86400));
  v.back().total_cpus = 64;
  v.back().tres = {{"cpu", 64}, {"mem", 2000000}, {"node", 1}, {"billing", 64}};
  return v;
}

inline NodeView anchor_node(const std::string& name, int64_t port) {
  NodeView n;
  n.name = name;
  n.addr = "127.0.0.1";
  n.hostname = "localhost";
  n.port = port;
  n.os = "Linux 6.18.44-fc-v669 #1 SMP PREEMPT_DYNAMIC @0";
  n.state.base = NodeBase::kIdle;
  n.sockets = 2;
  n.cpu_load = 1.71;
  n.free_memory_mb = 20858;
  n.boot_time = utc("2026-11-29T21:27:35");
  n.slurmd_start_time = utc("2026-11-29T21:37:12");
  bool gpu = name.rfind("gpu", 0) == 0;
  n.cpus = gpu ? 128 : 64;
  n.cores_per_socket = gpu ? 64 : 32;
  n.real_memory_mb = gpu ? 1000000 : (name == "hm01" ? 2000000 : 256000);
  n.cfg_tres = {{"cpu", n.cpus}, {"mem", n.real_memory_mb}, {"billing", n.cpus}};
  n.gres_used = {GresUse{"gpu", "", 0, ""}};
  if (gpu) {
    std::string type = name < "gpu03" ? "h100" : "a100";
    n.features = n.features_active = type;
    n.gres = {GresSpec{"gpu", type, 8}};
    n.gres_used = {GresUse{"gpu", type, 0, ""}};
    n.cfg_tres["gres/gpu"] = 8;
    n.cfg_tres["gres/gpu:" + type] = 8;
    n.partitions = {"training", "interactive"};
  } else if (name == "hm01") {
    n.features = n.features_active = "highmem";
    n.partitions = {"highmem"};
  } else {
    n.partitions = {"compute", "interactive"};
  }
  return n;
}

inline std::vector<NodeView> anchor_nodes_idle() {
  std::vector<NodeView> v;
  int64_t port = 17001;
  for (const char* n : {"gpu01", "gpu02", "gpu03", "gpu04"}) v.push_back(anchor_node(n, port++));
  port = 17011;
  for (const char* n : {"cpu01", "cpu02", "cpu03", "cpu04"}) v.push_back(anchor_node(n, port++));
  v.push_back(anchor_node("hm01", 17021));
  return v;
}

// The busy cluster of the *_busy goldens: every GPU node and cpu01, hm01 mixed.
inline std::vector<NodeView> anchor_nodes_busy() {
  auto v = anchor_nodes_idle();
  for (auto& n : v) {
    if (n.name == "cpu02" || n.name == "cpu03" || n.name == "cpu04") continue;
    n.state.base = NodeBase::kMixed;
    n.alloc_cpus = n.name == "gpu04" ? 2 : 1;
    n.alloc_memory_mb = 4096 * n.alloc_cpus;
    n.alloc_tres = {{"cpu", n.alloc_cpus}, {"mem", n.alloc_memory_mb}};
    if (!n.gres.empty()) {
      int64_t used = n.name == "gpu04" ? 6 : 8;
      n.gres_used[0].count = used;
      n.gres_used[0].indexes = used == 8 ? "0-7" : "0-5";
      n.alloc_tres["gres/gpu"] = used;
      n.alloc_tres["gres/gpu:" + n.gres[0].type] = used;
    }
  }
  return v;
}

}  // namespace drover::cli::test
