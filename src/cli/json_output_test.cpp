// squeue/sinfo/sacct --json against what real Slurm 22.05.8 printed on the
// anchor cluster (testdata/slurm-22.05-json, see testdata/README.md): the
// views are built to hold what those jobs and nodes held, and Drover's
// document must have Slurm's keys, in Slurm's order, with Slurm's values.
#include "cli/json_output.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli_test_support.hpp"
#include "cli/sacct_output.hpp"
#include "cli/sinfo_output.hpp"
#include "cli/squeue_output.hpp"

namespace drover::cli {
namespace {

using Json = nlohmann::ordered_json;

Json slurm_capture(const std::string& name) {
  std::ifstream in(std::string(DROVER_SOURCE_DIR) + "/src/cli/testdata/slurm-22.05-json/" + name);
  EXPECT_TRUE(in.good()) << "missing capture " << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return Json::parse(ss.str());
}

const Json& item_where(const Json& list, const std::string& key, const Json& value) {
  for (const auto& x : list) {
    if (x.contains(key) && x[key] == value) return x;
  }
  ADD_FAILURE() << "no item with " << key << "=" << value.dump();
  static const Json none = Json::object();
  return none;
}

// Every key path of an object, in order ("job_resources.allocated_nodes[].nodename").
void key_paths(const Json& o, const std::string& prefix, std::vector<std::string>& out) {
  if (o.is_object()) {
    for (auto it = o.begin(); it != o.end(); ++it) {
      out.push_back(prefix + it.key());
      // Socket and core numbers are data (which cores), not keys of the shape.
      if (it.key() == "sockets") continue;
      key_paths(it.value(), prefix + it.key() + ".", out);
    }
  } else if (o.is_array() && !o.empty() && o.front().is_object()) {
    key_paths(o.front(), prefix + "[].", out);
  }
}

std::vector<std::string> paths(const Json& o) {
  std::vector<std::string> out;
  key_paths(o, "", out);
  return out;
}

void expect_same(const Json& slurm, const Json& drover, const std::vector<std::string>& keys, const std::string& what) {
  for (const auto& k : keys) {
    ASSERT_TRUE(drover.contains(k)) << what << ": no " << k;
    EXPECT_EQ(drover[k], slurm[k]) << what << ": " << k;
  }
}

// ---- squeue --json ----------------------------------------------------------------------

JobView base_job(int64_t id, const char* name, const char* partition) {
  JobView j = test::anchor_job(id, partition, name, JobState::kPending, kNotSet, 0, "None");
  j.cluster = "anchor";
  j.work_dir = "/home/alice";
  j.submit_time = 1796364156;
  return j;
}

// 37066: sbatch -p training --gres=gpu:2 -c 4 --mem=8G -t 30, running on gpu01.
JobView gpu_job() {
  JobView j = base_job(37066, "gpujob", "training");
  j.state = JobState::kRunning;
  j.priority = 6711;
  j.nodes = j.batch_host = "gpu01";
  j.num_cpus = 4;
  j.cpus_per_task = 4;
  j.min_cpus_per_node = 4;
  j.mem_per_node_mb = 8192;
  j.time_limit = 30 * 60;
  j.tres_per_node = "gres:gpu:2";
  j.tres = {{"cpu", 4}, {"mem", 8192}, {"node", 1}, {"billing", 4}, {"gres/gpu", 2}, {"gres/gpu:h100", 2}};
  j.node_detail = {{"gpu01", "0-3", 8192, "gpu:h100:2(IDX:0-1)"}};
  j.start_time = j.eligible_time = j.accrue_time = 1796364156;
  j.end_time = j.start_time + 1800;
  return j;
}

// 37067_[2-5%2]: the pending rest of sbatch -a 0-5%2 -t 5.
JobView array_rest() {
  JobView j = base_job(37067, "arr", "compute");
  j.array_job_id = 37067;
  j.array_pending_tasks = {2, 3, 4, 5};
  j.array_max_running = 2;
  j.reason = "JobArrayTaskLimit";
  j.priority = 6393;
  j.mem_per_cpu_mb = 4096;
  j.time_limit = 5 * 60;
  j.tres = {{"cpu", 1}, {"mem", 4096}, {"node", 1}, {"billing", 1}};
  return j;
}

// 37068: sbatch -H -t 5, held.
JobView held_job() {
  JobView j = base_job(37068, "held", "compute");
  j.reason = "JobHeldUser";
  j.priority = 0;
  j.mem_per_cpu_mb = 4096;
  j.time_limit = 5 * 60;
  j.tres = {{"cpu", 1}, {"mem", 4096}, {"node", 1}, {"billing", 1}};
  return j;
}

// 37073: -p training without -t (no limit there).
JobView unlimited_job() {
  JobView j = base_job(37073, "inf", "training");
  j.state = JobState::kRunning;
  j.nodes = j.batch_host = "gpu01";
  j.time_limit = kInfinite;
  j.mem_per_cpu_mb = 4096;
  j.tres = {{"cpu", 1}, {"mem", 4096}, {"node", 1}, {"billing", 1}};
  return j;
}

NodeView node(const char* name, int64_t sockets, int64_t cores_per_socket) {
  NodeView n;
  n.name = name;
  n.sockets = sockets;
  n.cores_per_socket = cores_per_socket;
  n.cpus = sockets * cores_per_socket;
  return n;
}

TEST(SqueueJson, SlurmsDocumentKeysAndValues) {
  Json slurm = slurm_capture("squeue.json");
  Json drover = Json::parse(render_squeue_json({gpu_job(), array_rest(), held_job(), unlimited_job()},
                                               {node("gpu01", 2, 64)}));
  EXPECT_EQ(paths(drover["meta"]), paths(slurm["meta"]));
  EXPECT_EQ(drover["meta"]["Slurm"]["release"], "22.05.8");
  EXPECT_TRUE(drover["errors"].is_array() && drover["errors"].empty());
  ASSERT_EQ(drover["jobs"].size(), 4u);

  const std::vector<std::string> shared = {
      "account", "array_job_id", "array_task_id", "array_max_tasks", "array_task_string", "batch_flag",
      "cpus", "node_count", "tasks", "dependency", "exit_code", "derived_exit_code", "features", "gres_detail",
      "job_state", "memory_per_node", "memory_per_cpu", "minimum_cpus_per_node", "name", "nice", "partition",
      "priority", "qos", "requeue", "restart_cnt", "state_reason", "time_limit", "tres_per_node", "tres_req_str",
      "tres_alloc_str", "standard_input", "shared", "show_flags", "billable_tres"};

  const Json& gpu = item_where(drover["jobs"], "job_id", 37066);
  const Json& slurm_gpu = item_where(slurm["jobs"], "job_id", 37066);
  EXPECT_EQ(paths(gpu), paths(slurm_gpu));
  expect_same(slurm_gpu, gpu, shared, "running GPU job");
  expect_same(slurm_gpu, gpu, {"job_resources", "nodes", "end_time", "start_time"}, "running GPU job");

  const Json& rest = item_where(drover["jobs"], "array_task_string", "2-5%2");
  const Json& slurm_rest = item_where(slurm["jobs"], "array_task_string", "2-5%2");
  EXPECT_EQ(paths(rest), paths(slurm_rest));  // no job_resources while pending
  expect_same(slurm_rest, rest, shared, "pending array rest");
  expect_same(slurm_rest, rest, {"job_id", "nodes"}, "pending array rest");

  const Json& held = item_where(drover["jobs"], "job_id", 37068);
  expect_same(item_where(slurm["jobs"], "job_id", 37068), held, shared, "held job");

  const Json& unlimited = item_where(drover["jobs"], "job_id", 37073);
  EXPECT_TRUE(unlimited["time_limit"].is_null());
  EXPECT_EQ(unlimited["time_limit"], item_where(slurm["jobs"], "job_id", 37073)["time_limit"]);
}

TEST(SqueueJson, ExitStatusAndCoresOnTheSecondSocket) {
  JobView j = base_job(5, "x", "compute");
  j.state = JobState::kFailed;
  j.exit_code = 3;
  j.nodes = "cpu01";
  j.node_detail = {{"cpu01", "31-33", 100, ""}};
  Json doc = Json::parse(render_squeue_json({j}, {node("cpu01", 2, 32)}));
  const Json& o = doc["jobs"][0];
  EXPECT_EQ(o["exit_code"], 3 << 8);  // a wait status, as Slurm's 768 for exit 3
  const Json& sockets = o["job_resources"]["allocated_nodes"][0]["sockets"];
  EXPECT_EQ(sockets.dump(), R"({"0":{"cores":{"31":"allocated"}},"1":{"cores":{"0":"allocated","1":"allocated"}}})");
  EXPECT_EQ(o["job_resources"]["allocated_nodes"][0]["memory_allocated"], 100);
}

// ---- sinfo --json -----------------------------------------------------------------------

NodeView anchor_node(const char* name, int64_t cpus, int64_t mem, std::vector<GresSpec> gres, const char* features,
                     std::vector<std::string> partitions) {
  NodeView n;
  n.name = name;
  n.addr = "127.0.0.1";
  n.hostname = "localhost";
  n.sockets = 2;
  n.cores_per_socket = cpus / 2;
  n.cpus = cpus;
  n.real_memory_mb = mem;
  n.gres = std::move(gres);
  n.features = n.features_active = features;
  n.partitions = std::move(partitions);
  n.state.base = NodeBase::kIdle;
  n.cfg_tres = {{"cpu", cpus}, {"mem", mem}, {"billing", cpus}};
  return n;
}

TEST(SinfoJson, SlurmsDocumentKeysAndValues) {
  Json slurm = slurm_capture("sinfo.json");
  GresSpec h100;
  h100.name = "gpu";
  h100.type = "h100";
  h100.count = 8;
  NodeView gpu = anchor_node("gpu01", 128, 1000000, {h100}, "h100", {"training", "interactive"});
  gpu.cfg_tres["gres/gpu"] = gpu.cfg_tres["gres/gpu:h100"] = 8;
  gpu.state.base = NodeBase::kMixed;
  // The GPU job above (4 CPUs, 8G, 2 GPUs) and the one without a limit (1 CPU, 4G).
  gpu.alloc_cpus = 5;
  gpu.alloc_memory_mb = 12288;
  gpu.alloc_tres = {{"cpu", 5}, {"mem", 12288}, {"gres/gpu", 2}, {"gres/gpu:h100", 2}};
  gpu.gres_used = {GresUse{"gpu", "h100", 2, "0-1"}};
  NodeView hm = anchor_node("hm01", 64, 2000000, {}, "highmem", {"highmem"});
  hm.state.drain = true;
  hm.reason = "disk swap";
  hm.reason_user = "root";
  hm.reason_time = 1796364221;
  hm.gres_used = {GresUse{"gpu", "", 0, ""}};
  Json drover = Json::parse(render_sinfo_json({gpu, hm}));
  ASSERT_EQ(drover["nodes"].size(), 2u);
  const std::vector<std::string> shared = {
      "boards", "cores", "cpus", "features", "active_features", "gres", "gres_drained", "gres_used", "name",
      "state", "state_flags", "partitions", "real_memory", "reason", "reason_set_by_user", "sockets", "threads",
      "tres", "alloc_memory", "alloc_cpus", "idle_cpus", "tres_used", "tres_weighted", "owner", "weight"};
  for (const char* name : {"gpu01", "hm01"}) {
    const Json& d = item_where(drover["nodes"], "name", name);
    const Json& s = item_where(slurm["nodes"], "name", name);
    EXPECT_EQ(paths(d), paths(s)) << name;
    expect_same(s, d, shared, name);
  }
  EXPECT_EQ(item_where(drover["nodes"], "name", "hm01")["reason_changed_at"], 1796364221);
}

// ---- sacct --json -----------------------------------------------------------------------

AccountingRecord sacct_record(int64_t id, const char* name, JobState st) {
  AccountingRecord r;
  r.job_id = id;
  r.job_name = name;
  r.partition = "compute";
  r.account = "research";
  r.qos = "normal";
  r.user = "alice";
  r.group = "alice";
  r.uid = r.gid = 2001;
  r.cluster = "anchor";
  r.work_dir = "/home/alice";
  r.state = st;
  r.submit = 1796364156;
  r.time_limit = 5 * 60;
  return r;
}

TEST(SacctJson, SlurmsDocumentKeysAndValues) {
  Json slurm = slurm_capture("sacct.json");
  // 37069: -N 2 -n 4 --ntasks-per-node=2 --wrap "srun sleep 300", running, with its batch step and step 0.
  AccountingRecord multi = sacct_record(37069, "multi", JobState::kRunning);
  multi.priority = 6462;
  multi.start = multi.eligible = 1796364156;
  multi.nnodes = 2;
  multi.node_list = "cpu[01-02]";
  multi.alloc_cpus = multi.req_cpus = 4;
  multi.req_mem_mb = 4096;
  multi.req_tres = {{"cpu", 4}, {"mem", 16384}, {"node", 2}, {"billing", 4}};
  multi.alloc_tres = multi.req_tres;
  multi.flags = "SchedMain,StartRecieved";
  AccountingRecord batch = multi;
  batch.step = batch.job_name = "batch";
  batch.node_list = "cpu01";
  batch.ntasks = 1;
  batch.alloc_tres = {{"cpu", 2}, {"mem", 8192}, {"node", 1}};
  AccountingRecord step0 = multi;
  step0.step = "0";
  step0.job_name = "sleep";
  step0.ntasks = 4;
  step0.alloc_tres = {{"cpu", 4}, {"mem", 16384}, {"node", 2}};
  // 37067: the pending rest (tasks 2-5) of -a 0-5%2.
  AccountingRecord rest = sacct_record(37067, "arr", JobState::kPending);
  rest.array_job_id = 37067;
  rest.array_pending_tasks = {2, 3, 4, 5};
  rest.array_max_running = 2;
  rest.priority = 6393;
  rest.req_cpus = 1;
  rest.req_mem_mb = 4096;
  rest.req_tres = {{"cpu", 1}, {"mem", 4096}, {"node", 1}, {"billing", 1}};
  // 37074: killed by signal 9.
  AccountingRecord killed = sacct_record(37074, "sig", JobState::kFailed);
  killed.exit_signal = 9;
  killed.start = killed.end = killed.eligible = 1796364221;
  killed.node_list = "cpu01";
  AccountingRecord killed_batch = killed;
  killed_batch.step = killed_batch.job_name = "batch";

  Json drover = Json::parse(render_sacct_json({rest, multi, batch, step0, killed, killed_batch}, 1796364165));
  ASSERT_EQ(drover["jobs"].size(), 3u);

  const Json& d = item_where(drover["jobs"], "job_id", 37069);
  const Json& s = item_where(slurm["jobs"], "job_id", 37069);
  EXPECT_EQ(paths(d), paths(s));
  expect_same(s, d, {"account", "allocation_nodes", "array", "association", "cluster", "comment", "nodes", "name",
                     "partition", "priority", "qos", "required", "reservation", "state", "tres", "exit_code",
                     "derived_exit_code", "working_directory", "wckey", "het", "mcs", "flags"},
              "running job");
  ASSERT_EQ(d["steps"].size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(paths(d["steps"][i]), paths(s["steps"][i]));
    expect_same(s["steps"][i], d["steps"][i], {"nodes", "tasks", "state", "step", "exit_code", "task"},
                "step " + std::to_string(i));
    EXPECT_EQ(d["steps"][i]["tres"]["allocated"], s["steps"][i]["tres"]["allocated"]);
  }
  EXPECT_EQ(d["time"]["elapsed"], 9);
  EXPECT_EQ(d["time"]["limit"], s["time"]["limit"]);

  const Json& dr = item_where(drover["jobs"], "job_id", 37067);
  const Json& sr = item_where(slurm["jobs"], "job_id", 37067);
  expect_same(sr, dr, {"array", "nodes", "steps", "tres", "required", "priority"}, "pending array rest");
  EXPECT_EQ(dr["array"]["task"], "0x3C");

  const Json& dk = item_where(drover["jobs"], "job_id", 37074);
  const Json& sk = item_where(slurm["jobs"], "job_id", 37074);
  EXPECT_EQ(dk["exit_code"], sk["exit_code"]);  // SIGNALED, signal 9 "Killed"
  EXPECT_EQ(dr["flags"], sr["flags"]) << "pending: none";
  EXPECT_EQ(dk["steps"][0]["exit_code"], sk["steps"][0]["exit_code"]);
}

TEST(SacctJson, KeepsSacctsSelectionAndNestsTheSteps) {
  AccountingRecord mine = sacct_record(10, "a", JobState::kCompleted);
  mine.start = 100;
  mine.end = 160;
  mine.exit_code = 0;
  AccountingRecord step = mine;
  step.step = "batch";
  AccountingRecord other = sacct_record(11, "b", JobState::kCompleted);
  other.user = "bob";
  other.start = 100;
  other.end = 130;
  auto opts = parse_sacct_options({"--json", "-j", "10,11", "-u", "alice", "-X"}, {});
  ASSERT_TRUE(opts);
  EXPECT_TRUE(opts->json);
  auto out = render_sacct(*opts, {mine, step, other}, "alice", 200);
  EXPECT_EQ(out.exit_code, 0);
  Json doc = Json::parse(out.out);
  ASSERT_EQ(doc["jobs"].size(), 1u);  // -u alice leaves bob's job out
  EXPECT_EQ(doc["jobs"][0]["job_id"], 10);
  EXPECT_EQ(doc["jobs"][0]["time"]["elapsed"], 60);
  ASSERT_EQ(doc["jobs"][0]["steps"].size(), 1u);  // -X is a format option here: the steps stay nested
  EXPECT_EQ(doc["jobs"][0]["steps"][0]["step"]["id"], "batch");
}

TEST(JsonOptions, YamlIsRefusedClearlyAndJsonIgnoresTheFormat) {
  auto sq = parse_squeue_options({"--yaml"}, {});
  ASSERT_FALSE(sq);
  EXPECT_EQ(sq.error().exit_code, 1);
  EXPECT_NE(sq.error().text.find("squeue: error: --yaml is not built"), std::string::npos);
  auto si = parse_sinfo_options({"--yaml"}, {});
  ASSERT_FALSE(si);
  EXPECT_NE(si.error().text.find("sinfo: error: --yaml"), std::string::npos);
  auto sa = parse_sacct_options({"--yaml"}, {});
  ASSERT_FALSE(sa);
  EXPECT_NE(sa.error().text.find("sacct: error: --yaml"), std::string::npos);
  auto json = parse_squeue_options({"--json", "-o", "%i", "-u", "bob"}, {});
  ASSERT_TRUE(json);
  EXPECT_TRUE(json->json);
  auto sinfo_json = parse_sinfo_options({"--json", "-N"}, {});
  ASSERT_TRUE(sinfo_json);
  EXPECT_TRUE(sinfo_json->json);
}

}  // namespace
}  // namespace drover::cli
