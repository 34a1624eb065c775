// The trace readers: SWF, Drover's CSV / JSON lines, sacct history (on the
// real-Slurm captures in ../shared/anchors), and the slice / limit options.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "sim/trace.hpp"
#include "sim/trace_fields.hpp"

namespace drover::sim {
namespace {

std::string shared_path(const std::string& rel) { return std::string(DROVER_SOURCE_DIR) + "/../shared/" + rel; }

const char* kSwf =
    "; Version: 2\n"
    "; MaxNodes: 64\n"
    "; MaxProcs: 128\n"
    "1 0 -1 100 4 -1 -1 -1 -1 -1 1 3 7 2 1 -1 -1 -1\n"
    "2 10 5 50 -1 -1 -1 8 200 2048 0 4 -1 -1 -1 2 1 30\n"
    "3 20 -1 -1 4 -1 -1 -1 -1 -1 5 -1 -1 -1 -1 -1 -1 -1\n";

TEST(SwfReader, ReadsAllFieldsAndHeader) {
  SwfOptions o;
  o.partitions = {{2, "gpu"}};
  auto t = read_swf(kSwf, "t.swf", o);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->max_nodes, 64);
  EXPECT_EQ(t->max_procs, 128);
  ASSERT_EQ(t->jobs.size(), 2u);  // job 3 has no run time
  EXPECT_EQ(t->skipped, 1);
  const auto& a = t->jobs[0];
  EXPECT_EQ(a.spec.id, 1);
  EXPECT_EQ(a.label, "1");
  EXPECT_EQ(a.spec.ntasks, 4);  // allocated processors when none were requested
  EXPECT_EQ(a.spec.time_limit, -1);
  EXPECT_EQ(a.run_time, 100);
  EXPECT_EQ(a.spec.user, "user3");
  EXPECT_EQ(a.spec.account, "group7");
  EXPECT_EQ(a.spec.name, "app2");
  const auto& b = t->jobs[1];
  EXPECT_EQ(b.spec.ntasks, 8);
  EXPECT_EQ(b.spec.time_limit, 200);
  EXPECT_EQ(b.spec.mem_per_cpu_mb, 2);
  EXPECT_TRUE(b.fails);
  EXPECT_EQ(b.spec.partitions, std::vector<std::string>{"gpu"});
  EXPECT_EQ(b.preceding, 1);
  EXPECT_EQ(b.think_time, 30);
  EXPECT_EQ(b.spec.account, "default");
}

TEST(SwfReader, WholeNodesMode) {
  SwfOptions o;
  o.procs = SwfProcs::kWholeNodes;
  o.cpus_per_node = 2;
  auto t = read_swf(kSwf, "t.swf", o);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->jobs[1].spec.min_nodes, 4);
  EXPECT_TRUE(t->jobs[1].spec.exclusive);
}

TEST(SwfReader, ErrorsNameLineAndField) {
  auto t = read_swf("; x\n1 0 -1 10 x -1 -1 -1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n", "bad.swf", {});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message, "bad.swf:2: field 5 (allocated processors): \"x\" is not a number");
  auto short_line = read_swf("1 0 -1 10\n", "bad.swf", {});
  ASSERT_FALSE(short_line.ok());
  EXPECT_EQ(short_line.error().message,
            "bad.swf:1: field 5 (allocated processors): missing: an SWF record has 18 fields, this line has 4");
}

TEST(SwfReader, LublinTrace) {
  std::string path = shared_path("traces/lublin-256-1.swf");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not present";
  auto t = load_trace(path, {});
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->jobs.size(), 10000u);
  EXPECT_EQ(t->max_nodes, 256);
  EXPECT_EQ(t->jobs[0].spec.time_limit, 12072);  // no requested time: limit = run time
  EXPECT_EQ(t->jobs[0].spec.ntasks, 16);
}

TEST(TraceOptions, SliceAndLimits) {
  TraceOptions o;
  o.first = 1;
  o.count = 5;
  o.limit_scale = 2.0;
  o.limit_shift = 10;
  auto t = read_swf(kSwf, "t.swf", {});
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(apply_trace_options(*t, o).ok());
  ASSERT_EQ(t->jobs.size(), 1u);
  EXPECT_EQ(t->jobs[0].spec.id, 2);
  EXPECT_EQ(t->jobs[0].spec.time_limit, 410);

  auto u = read_swf(kSwf, "t.swf", {});
  TraceOptions keep;
  keep.missing_limit = MissingLimit::kPartitionDefault;
  keep.run_to_limit = true;
  ASSERT_TRUE(apply_trace_options(*u, keep).ok());
  EXPECT_EQ(u->jobs[0].spec.time_limit, -1);
  EXPECT_EQ(u->jobs[0].run_time, -1);

  auto w = read_swf(kSwf, "t.swf", {});
  TraceOptions past;
  past.first = 7;
  auto st = apply_trace_options(*w, past);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message, "--jobs 7:-1: the trace has 2 jobs (FIRST counts from 0)");
}

TEST(TraceOptions, DuplicateIdsAreAnError) {
  auto t = read_native_csv("id,submit,run_time\n5,0,10\n5,1,10\n", "d.csv");
  ASSERT_TRUE(t.ok());
  auto st = apply_trace_options(*t, {});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message, "d.csv:3: field id: job 5 is given twice (first at d.csv:2)");
}

TEST(NativeCsv, ReadsEveryColumn) {
  const char* text =
      "# a comment\n"
      "id,user,account,partition,qos,nodes,ntasks,ntasks_per_node,cpus_per_task,mem,gres,gpus,constraint,exclusive,"
      "time_limit,run_time,submit,dependency,array_job,array_task,state,licenses,mem_per_cpu,begin\n"
      "7,alice,ml,\"training,interactive\",normal,2-4,16,8,2,64G,gpu:h100:8,h100:16,h100&bigmem,yes,48:00:00,3600,"
      "12,\"afterok:3:4\",7,0,FAILED,fsbw:2,,100\n";
  auto t = read_native_csv(text, "n.csv");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->jobs.size(), 1u);
  const auto& s = t->jobs[0].spec;
  EXPECT_EQ(s.id, 7);
  EXPECT_EQ(s.user, "alice");
  EXPECT_EQ(s.account, "ml");
  EXPECT_EQ(s.partitions, (std::vector<std::string>{"training", "interactive"}));
  EXPECT_EQ(s.qos, "normal");
  EXPECT_EQ(s.min_nodes, 2);
  EXPECT_EQ(s.max_nodes, 4);
  EXPECT_EQ(s.ntasks, 16);
  EXPECT_EQ(s.ntasks_per_node, 8);
  EXPECT_EQ(s.cpus_per_task, 2);
  EXPECT_EQ(s.mem_per_node_mb, 65536);
  ASSERT_EQ(s.gres.size(), 1u);
  EXPECT_EQ(s.gres[0].type, "h100");
  EXPECT_EQ(s.gres[0].count, 8);
  EXPECT_EQ(s.gpus.type, "h100");
  EXPECT_EQ(s.gpus.count, 16);
  EXPECT_EQ(s.constraint, "h100&bigmem");
  EXPECT_TRUE(s.exclusive);
  EXPECT_EQ(s.time_limit, 48 * 3600);
  EXPECT_EQ(t->jobs[0].run_time, 3600);
  EXPECT_EQ(s.submit_time, 12);
  EXPECT_EQ(s.begin_time, 100);
  ASSERT_EQ(s.dependency.items.size(), 2u);
  EXPECT_EQ(s.dependency.items[1].job, 4);
  EXPECT_EQ(s.dependency.items[1].kind, core::DepKind::kAfterOk);
  EXPECT_EQ(s.array_job_id, 7);
  EXPECT_EQ(s.array_task_id, 0);
  EXPECT_TRUE(t->jobs[0].fails);
  EXPECT_EQ(s.licenses.at("license/fsbw"), 2);
  EXPECT_EQ(s.mem_per_cpu_mb, -1);
}

TEST(NativeCsv, Errors) {
  struct Case {
    const char* text;
    const char* error;
  };
  const Case cases[] = {
      {"id,submit,run_time,memory\n", "x.csv:1: field memory: unknown column; did you mean mem?"},
      {"id,run_time\n", "x.csv:1: field submit: the header has no submit column"},
      {"submit,run_time\n0,10,3\n", "x.csv:2: field row: 3 fields, but the header names 2 columns"},
      {"submit,run_time,mem\n0,10,1.5G\n",
       "x.csv:2: field mem: memory size \"1.5G\" is not a whole number; Slurm takes no fractions (a whole number of "
       "megabytes, or one with a suffix K, M, G, T or P, e.g. 64G)"},
      {"submit,run_time,time_limit\n0,10,soon\n",
       "x.csv:2: field time_limit: \"soon\" is not seconds (a whole number) or a Slurm duration (D-HH:MM:SS)"},
      {"submit,run_time,dependency\n0,10,afterwards:3\n",
       "x.csv:2: field dependency: unknown dependency type \"afterwards\""},
      {"submit,run_time\n0,\n", "x.csv:2: field run_time: missing: every job needs its run time (seconds)"},
  };
  for (const auto& c : cases) {
    auto t = read_native_csv(c.text, "x.csv");
    ASSERT_FALSE(t.ok()) << c.text;
    EXPECT_EQ(t.error().message, c.error) << c.text;
  }
}

TEST(NativeJsonl, ReadsAndRoundTrips) {
  const char* text =
      "{\"id\": 3, \"user\": \"bob\", \"submit\": 5, \"run_time\": 60, \"gres\": \"gpu:1\", \"cpus_per_task\": 16, "
      "\"exclusive\": true, \"time_limit\": \"1:00:00\"}\n"
      "{\"id\": 4, \"submit\": 6, \"run_time\": \"0:30\", \"dependency\": \"afterany:3\"}\n";
  auto t = read_native_jsonl(text, "j.jsonl");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->jobs.size(), 2u);
  EXPECT_EQ(t->jobs[0].spec.cpus_per_task, 16);
  EXPECT_TRUE(t->jobs[0].spec.exclusive);
  EXPECT_EQ(t->jobs[0].spec.time_limit, 3600);
  EXPECT_EQ(t->jobs[1].run_time, 30);
  EXPECT_EQ(t->jobs[1].spec.account, "default");

  for (const auto& written : {write_native_csv(t->jobs), write_native_jsonl(t->jobs)}) {
    auto back = written[0] == '{' ? read_native_jsonl(written, "w") : read_native_csv(written, "w");
    ASSERT_TRUE(back.ok()) << back.error().message << "\n" << written;
    ASSERT_EQ(back->jobs.size(), 2u);
    EXPECT_EQ(back->jobs[0].spec.gres, t->jobs[0].spec.gres);
    EXPECT_EQ(back->jobs[0].spec.time_limit, 3600);
    EXPECT_EQ(back->jobs[1].spec.dependency.items.size(), 1u);
    EXPECT_EQ(back->jobs[1].spec.submit_time, 6);
  }
  auto bad = read_native_jsonl("{\"id\": 1, \"sbmit\": 3}\n", "j.jsonl");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "j.jsonl:1: field sbmit: unknown key; did you mean submit?");
}

TEST(Sacct, Parsable2) {
  const char* text =
      "JobID|Submit|Start|End|Timelimit|ReqTRES|Partition|QOS|User|Account|State|Constraints\n"
      "10|2024-03-01T10:00:00|2024-03-01T10:00:05|2024-03-01T11:00:05|02:00:00|billing=16,cpu=16,gres/gpu:h100=16,"
      "gres/gpu=16,mem=128G,node=2|training|normal|alice|ml|COMPLETED|h100\n"
      "10.batch|2024-03-01T10:00:05|2024-03-01T10:00:05|2024-03-01T11:00:05||cpu=8|||||COMPLETED|\n"
      "11|2024-03-01T10:30:00|Unknown|Unknown|01:00:00|cpu=1,mem=4G,node=1|compute|normal|bob|ml|PENDING|\n"
      "12_3|2024-03-01T10:10:00|2024-03-01T10:20:00|2024-03-01T10:25:00|UNLIMITED|cpu=4,mem=8G,node=1|compute|normal|"
      "bob|ml|FAILED|\n";
  auto t = read_sacct(text, "h.txt");
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->jobs.size(), 2u);
  EXPECT_EQ(t->skipped, 2);
  const auto& a = t->jobs[0];
  EXPECT_EQ(a.label, "10");
  EXPECT_EQ(a.spec.id, 10);
  EXPECT_EQ(a.spec.submit_time, 0);
  EXPECT_EQ(a.run_time, 3600);
  EXPECT_EQ(a.spec.time_limit, 7200);
  EXPECT_EQ(a.spec.min_nodes, 2);
  EXPECT_EQ(a.spec.ntasks, 16);
  EXPECT_EQ(a.spec.ntasks_per_node, 8);
  EXPECT_EQ(a.spec.mem_per_node_mb, 65536);
  ASSERT_EQ(a.spec.gres.size(), 1u);
  EXPECT_EQ(a.spec.gres[0].str(), "gpu:h100:8");
  EXPECT_EQ(a.spec.partitions, std::vector<std::string>{"training"});
  EXPECT_EQ(a.spec.constraint, "h100");
  EXPECT_EQ(a.spec.user, "alice");
  const auto& b = t->jobs[1];
  EXPECT_EQ(b.label, "12_3");
  EXPECT_EQ(b.spec.array_job_id, 12);
  EXPECT_EQ(b.spec.array_task_id, 3);
  EXPECT_EQ(b.spec.submit_time, 600);
  EXPECT_EQ(b.spec.time_limit, kInfinite);
  EXPECT_TRUE(b.fails);
}

TEST(Sacct, ErrorsNameLineAndField) {
  auto t = read_sacct("JobID|Submit|Start|End|ReqTRES\n1|2024-03-01 10:00|x|y|cpu=1\n", "h.txt");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().message, "h.txt:2: field start: \"x\" is not a time stamp YYYY-MM-DDTHH:MM:SS");
  auto tres = read_sacct("JobID|Start|End|ReqTRES\n1|2024-03-01T10:00:00|2024-03-01T10:00:01|cpus=1\n", "h.txt");
  ASSERT_FALSE(tres.ok());
  EXPECT_NE(tres.error().message.find("h.txt:2: field reqtres: "), std::string::npos) << tres.error().message;
}

// The real-Slurm captures: sacct's fixed-width table with a `$ sacct ...` line first.
TEST(Sacct, RealSlurmGoldenFiles) {
  std::string dir = shared_path("anchors/slurm/golden/");
  if (!std::filesystem::exists(dir + "sacct_gpu_job.txt")) GTEST_SKIP() << dir << " not present";
  auto gpu = load_trace(dir + "sacct_gpu_job.txt", {});
  ASSERT_TRUE(gpu.ok()) << gpu.error().message;
  EXPECT_EQ(gpu->format, "sacct");
  ASSERT_EQ(gpu->jobs.size(), 1u);
  EXPECT_EQ(gpu->skipped, 1);  // 93.batch
  EXPECT_EQ(gpu->jobs[0].label, "93");
  EXPECT_EQ(gpu->jobs[0].run_time, 1);
  EXPECT_EQ(gpu->jobs[0].spec.partitions, std::vector<std::string>{"training"});
  ASSERT_EQ(gpu->jobs[0].spec.gres.size(), 1u);
  EXPECT_EQ(gpu->jobs[0].spec.gres[0].str(), "gpu:h100:2");
  EXPECT_EQ(gpu->jobs[0].spec.mem_per_node_mb, 4096);

  auto array = load_trace(dir + "sacct_array_job.txt", {});
  ASSERT_TRUE(array.ok()) << array.error().message;
  ASSERT_EQ(array->jobs.size(), 3u);
  EXPECT_EQ(array->jobs[2].label, "96_2");
  EXPECT_EQ(array->jobs[0].spec.id, 96);
  EXPECT_EQ(array->jobs[2].spec.array_job_id, 96);
  EXPECT_EQ(array->jobs[2].spec.array_task_id, 2);

  auto running = load_trace(dir + "sacct_running_gpu.txt", {});
  ASSERT_TRUE(running.ok()) << running.error().message;
  ASSERT_EQ(running->jobs.size(), 1u);
  EXPECT_EQ(running->jobs[0].run_time, 36);
  EXPECT_EQ(running->jobs[0].spec.gres[0].str(), "gpu:a100:2");

  auto cancelled = load_trace(dir + "sacct_cancelled.txt", {});
  ASSERT_TRUE(cancelled.ok()) << cancelled.error().message;
  EXPECT_EQ(cancelled->jobs.size(), 0u);
  EXPECT_EQ(cancelled->skipped, 1);

  auto plain = load_trace(dir + "sacct_default.txt", {});
  ASSERT_FALSE(plain.ok());  // sacct's default columns carry no times
  EXPECT_EQ(plain.error().message, dir + "sacct_default.txt:4: field End: no run time: give End and Start, or Elapsed");
}

TEST(TraceFields, IsoUtc) {
  auto t = parse_iso_utc("1970-01-02T00:00:01");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, 86401);
  EXPECT_EQ(*parse_iso_utc("2024-03-01T00:00:00") - *parse_iso_utc("2024-02-28T00:00:00"), 2 * 86400);
}

TEST(TraceFields, GuessFormat) {
  EXPECT_EQ(guess_format("a.swf", ""), "swf");
  EXPECT_EQ(guess_format("a", "; header\n1 2 3"), "swf");
  EXPECT_EQ(guess_format("a", "{\"submit\": 1}"), "jsonl");
  EXPECT_EQ(guess_format("a.txt", "$ sacct -j 1\nJobID ..."), "sacct");
  EXPECT_EQ(guess_format("a", "JobID|Submit"), "sacct");
  EXPECT_EQ(guess_format("a", "submit,run_time"), "csv");
}

// A file whose name says one format and whose first line another (what
// `drover sim gen > jobs.swf` makes): the error says both, and how to fix it.
TEST(TraceFields, NameAndFirstLineDisagree) {
  std::string path =
      (std::filesystem::temp_directory_path() / ("drover-trace-" + std::to_string(getpid()) + ".swf")).string();
  std::ofstream(path) << "id,submit,ntasks,time_limit,run_time\n1,0,1,60,30\n";
  auto t = load_trace(path, {});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.error().message.find(path + ":1: field 1 (job number)"), std::string::npos) << t.error().message;
  EXPECT_NE(t.error().message.find("the format swf comes from the file's name, but its first line looks like csv: "
                                   "rename it or pass --format csv"),
            std::string::npos)
      << t.error().message;
  TraceOptions as_csv;
  as_csv.format = "csv";
  auto csv = load_trace(path, as_csv);
  EXPECT_TRUE(csv.ok()) << csv.error().message;
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace drover::sim
