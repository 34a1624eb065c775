// The exact command lines real clients run (anchors/clients.md), fed to the
// option parsers and renderers, and each output checked with that client's
// own parse rule: Nextflow, snakemake, submitit, dask-jobqueue, the
// Prometheus Slurm exporter and Open OnDemand.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>

#include "cli/cli_test_support.hpp"
#include "cli/sacct_output.hpp"
#include "cli/sinfo_output.hpp"
#include "cli/squeue_output.hpp"
#include "common/strings.hpp"

namespace drover::cli {
namespace {

using test::anchor_now;

std::vector<std::string> lines_of(const std::string& out) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

std::vector<std::string> whitespace_fields(const std::string& line) {
  std::vector<std::string> f;
  std::istringstream in(line);
  for (std::string w; in >> w;) f.push_back(w);
  return f;
}

// A queue with every job state, for `-t all` listings.
std::vector<JobView> all_state_jobs() {
  auto jobs = test::anchor_jobs();
  JobView done = jobs.front();
  done.job_id = 90;
  done.name = "finished";
  for (JobState s : {JobState::kCompleted, JobState::kCancelled, JobState::kFailed, JobState::kTimeout,
                     JobState::kNodeFail, JobState::kPreempted, JobState::kBootFail, JobState::kOutOfMemory,
                     JobState::kCompleting, JobState::kConfiguring, JobState::kSuspended, JobState::kDeadline}) {
    done.state = s;
    ++done.job_id;
    jobs.push_back(done);
  }
  return jobs;
}

std::string squeue(const std::vector<std::string>& args, const std::vector<JobView>& jobs) {
  auto opts = parse_squeue_options(args, {});
  EXPECT_TRUE(opts.ok()) << (opts.ok() ? "" : opts.error().text);
  if (!opts.ok()) return "";
  CommandOutput out = render_squeue(*opts, jobs, anchor_now());
  EXPECT_EQ(out.err, "");
  return out.out;
}

std::string sinfo(const std::vector<std::string>& args, bool busy = true) {
  auto opts = parse_sinfo_options(args, {});
  EXPECT_TRUE(opts.ok()) << (opts.ok() ? "" : opts.error().text);
  if (!opts.ok()) return "";
  auto nodes = busy ? test::anchor_nodes_busy() : test::anchor_nodes_idle();
  CommandOutput out = render_sinfo(*opts, test::anchor_partitions(), nodes, anchor_now());
  EXPECT_EQ(out.err, "");
  return out.out;
}

class Clients : public ::testing::Test {
 protected:
  void SetUp() override { test::use_utc(); }
};

// Nextflow SlurmExecutor: `squeue --noheader -o '%i %t' -t all`; every line
// splits into exactly two whitespace columns, the second a known code.
TEST_F(Clients, NextflowQueueStatus) {
  const std::set<std::string> codes{"PD", "R", "CA", "CF", "CG", "CD", "F", "TO", "NF", "S", "ST", "PR", "BF",
                                    "OOM", "DL"};
  auto lines = lines_of(squeue({"--noheader", "-o", "%i %t", "-t", "all"}, all_state_jobs()));
  ASSERT_GE(lines.size(), 30u);
  std::set<std::string> seen;
  for (const auto& l : lines) {
    auto f = whitespace_fields(l);
    ASSERT_EQ(f.size(), 2u) << l;
    EXPECT_TRUE(codes.count(f[1])) << l;
    seen.insert(f[0]);
  }
  EXPECT_TRUE(seen.count("117_0"));       // array tasks looked up as <jobId>_<index>
  EXPECT_TRUE(seen.count("117_[2-9%2]"));
}

// Prometheus exporter queue.go: `squeue -a -r -h "-o %A,%T,%r" --states=all`,
// split on ',' into id, state, reason; the format's leading space is kept.
TEST_F(Clients, PrometheusExporterQueue) {
  auto lines = lines_of(squeue({"-a", "-r", "-h", "-o %A,%T,%r", "--states=all"}, all_state_jobs()));
  const std::set<std::string> states{"PENDING", "RUNNING", "SUSPENDED", "CANCELLED", "COMPLETING", "COMPLETED",
                                     "CONFIGURING", "FAILED", "TIMEOUT", "PREEMPTED", "NODE_FAIL", "BOOT_FAIL",
                                     "OUT_OF_MEMORY", "DEADLINE"};
  int dependency = 0;
  for (const auto& l : lines) {
    auto f = split(l, ',');
    ASSERT_EQ(f.size(), 3u) << l;
    EXPECT_EQ(f[0][0], ' ');
    EXPECT_TRUE(parse_int(trim(f[0])).has_value()) << l;
    EXPECT_TRUE(states.count(f[1])) << l;
    dependency += f[1] == "PENDING" && f[2] == "Dependency";
  }
  EXPECT_EQ(dependency, 1);
  // The array's eight pending tasks are one line each with -r.
  EXPECT_EQ(std::count_if(lines.begin(), lines.end(), [](const std::string& l) { return l == " 117,PENDING,JobArrayTaskLimit"; }),
            8);
}

// Prometheus accounts.go / users.go: `"-o %A|%a|%T|%C"`, split on '|'.
TEST_F(Clients, PrometheusExporterAccountsAndUsers) {
  for (const char* fmt : {"-o %A|%a|%T|%C", "-o %A|%u|%T|%C"}) {
    for (const auto& l : lines_of(squeue({"-a", "-r", "-h", fmt}, test::anchor_jobs()))) {
      auto f = split(l, '|');
      ASSERT_EQ(f.size(), 4u) << l;
      EXPECT_TRUE(f[1] == "research" || f[1] == "alice") << l;
      EXPECT_TRUE(parse_int(f[3]).has_value()) << l;
    }
  }
  auto pending_parts = lines_of(squeue({"-a", "-r", "-h", "-o%P", "--states=PENDING"}, test::anchor_jobs()));
  EXPECT_EQ(pending_parts.size(), 17u);  // 9 pending jobs, the array's 8 tasks expanded
}

// Prometheus partitions.go / cpus.go / nodes.go / node.go / gpus.go.
TEST_F(Clients, PrometheusExporterSinfo) {
  std::regex aiot(R"((\d+)/(\d+)/(\d+)/(\d+))");
  for (const auto& l : lines_of(sinfo({"-h", "-o%R,%C"}))) {
    auto f = split(l, ',');
    ASSERT_EQ(f.size(), 2u);
    EXPECT_TRUE(std::regex_match(f[1], aiot)) << l;
  }
  auto cpus = lines_of(sinfo({"-h", "-o %C"}));
  ASSERT_EQ(cpus.size(), 1u);
  EXPECT_EQ(cpus[0], " 7/825/0/832");  // one line for the whole cluster, each node once
  std::map<std::string, int> by_state;
  for (const auto& l : lines_of(sinfo({"-h", "-o %D,%T"}))) {
    auto f = split(std::string(trim(l)), ',');
    ASSERT_EQ(f.size(), 2u);
    by_state[f[1]] += static_cast<int>(*parse_int(f[0]));
  }
  EXPECT_EQ(by_state, (std::map<std::string, int>{{"idle", 3}, {"mixed", 6}}));
  for (const auto& l : lines_of(sinfo({"-h", "-N", "-O", "NodeList,AllocMem,Memory,CPUsState,StateLong"}))) {
    auto f = whitespace_fields(l);
    ASSERT_EQ(f.size(), 5u) << l;
    EXPECT_TRUE(std::regex_match(f[3], aiot)) << l;
  }
  // gpus.go: the single argument '-o "%n %G"' keeps its space and quotes.
  auto gres = lines_of(sinfo({"-h", "-o \"%n %G\""}));
  ASSERT_FALSE(gres.empty());
  for (const auto& l : gres) EXPECT_TRUE(std::regex_match(l, std::regex(R"re( "localhost (gpu:\w+:\d+|\(null\))")re"))) << l;
}

// dask-jobqueue tests: `sinfo -o %C`: split on whitespace, second token, its
// second '/' field is the idle CPU count.
TEST_F(Clients, DaskJobqueueIdleCpus) {
  auto tokens = whitespace_fields(sinfo({"-o", "%C"}, false));
  ASSERT_EQ(tokens.size(), 2u);
  EXPECT_EQ(tokens[0], "CPUS(A/I/O/T)");
  EXPECT_EQ(split(tokens[1], '/')[1], "832");
}

// snakemake: `sinfo -o %P` marks the default partition with '*'; the status
// fallback `squeue --format='%i|%T' --states=all --noheader --name <uuid>`.
TEST_F(Clients, SnakemakeSinfoAndSqueue) {
  auto parts = lines_of(sinfo({"-o", "%P"}));
  EXPECT_EQ(parts, (std::vector<std::string>{"PARTITION", "training", "compute*", "interactive", "highmem"}));
  auto jobs = test::anchor_jobs();
  jobs[3].name = "0f6c-uuid";
  auto lines = lines_of(squeue({"--format=%i|%T", "--states=all", "--noheader", "--name", "0f6c-uuid"}, jobs));
  EXPECT_EQ(lines, (std::vector<std::string>{"114|PENDING"}));
}

// Open OnDemand: sinfo calls.
TEST_F(Clients, OpenOnDemandSinfo) {
  auto totals = lines_of(sinfo({"-aho", "%F/%C"}));
  ASSERT_EQ(totals.size(), 1u);
  EXPECT_EQ(totals[0], "6/3/0/9/7/825/0/832");
  for (const auto& l : lines_of(sinfo({"-ahNO", "nodehost:100,gres:512,gresused:512,statelong"}))) {
    EXPECT_EQ(l.size(), 100u + 512u + 512u + 20u);
    auto f = whitespace_fields(l);
    ASSERT_EQ(f.size(), 4u) << l;
    EXPECT_EQ(f[0], "localhost");
  }
  std::string us = "\x1F", rs = "\x1E";
  for (const auto& l : lines_of(sinfo({"-ho", rs + "%c" + us + "%n" + us + "%f"}))) {
    ASSERT_EQ(l.substr(0, 1), rs);
    EXPECT_EQ(split(l.substr(1), '\x1F').size(), 3u) << l;
  }
}

// Open OnDemand status: `squeue --all --states=all --noconvert -O
// Name:\x1F,...`; the header ends at the first \x1F directly followed by a
// newline, then each line splits on \x1F into the requested fields.
TEST_F(Clients, OpenOnDemandSqueueLongFormat) {
  const std::vector<std::string> names{
      "Account", "JobID", "ArrayJobID", "ArrayTaskID", "JobArrayID", "BatchHost", "MinCpus", "NumCPUs",
      "NumNodes", "EndTime", "Dependency", "Feature", "GroupName", "OverSubscribe", "Name", "Comment",
      "TimeLimit", "TimeLeft", "TimeUsed", "MinMemory", "ReqNodes", "Command", "Contiguous", "QOS",
      "Partition", "PriorityLong", "Reason", "ReasonList", "StartTime", "StateCompact", "State", "UserName",
      "UserID", "Reservation", "SubmitTime", "WCKey", "Licenses", "Nice", "SchedNodes", "SCT", "WorkDir",
      "NodeList", "tres-alloc", "tres-per-node"};
  std::string fmt;
  for (const auto& n : names) fmt += (fmt.empty() ? "" : ",") + n + ":\x1F";
  std::string out = squeue({"--all", "--states=all", "--noconvert", "-O", fmt}, test::anchor_jobs());
  auto header_end = out.find("\x1F\n");
  ASSERT_NE(header_end, std::string::npos);
  auto lines = lines_of(out.substr(header_end + 2));
  EXPECT_EQ(lines.size(), test::anchor_jobs().size());
  std::set<std::string> codes{"BF", "CA", "CD", "CF", "CG", "F", "NF", "PD", "PR", "RV", "R", "SE", "ST", "S", "TO", "OOM"};
  for (const auto& l : lines) {
    auto f = split(l, '\x1F');
    ASSERT_EQ(f.size(), names.size() + 1) << l;  // each field ends in \x1F
    EXPECT_TRUE(codes.count(f[29])) << l;
  }
}

// ---- sacct ----------------------------------------------------------------------

AccountingRecord record(int64_t id, JobState st) {
  AccountingRecord r;
  r.job_id = id;
  r.job_name = "0f6c-uuid";
  r.user = "alice";
  r.state = st;
  r.submit = r.eligible = test::utc("2026-11-29T21:00:00");
  r.partition = "compute";
  r.req_mem_mb = 8192;
  r.node_list = st == JobState::kPending ? "" : "cpu01";
  if (st != JobState::kPending) r.start = test::utc("2026-11-29T21:00:05");
  return r;
}

std::vector<AccountingRecord> client_records() {
  std::vector<AccountingRecord> v;
  v.push_back(record(20956420, JobState::kRunning));
  AccountingRecord step = v.back();
  step.step = "batch";
  v.push_back(step);
  AccountingRecord array = record(20956421, JobState::kPending);
  array.array_job_id = 20956421;
  array.array_pending_tasks = {2, 3, 4};
  array.array_max_running = 25;
  v.push_back(array);
  AccountingRecord element = record(20956422, JobState::kCompleted);
  element.array_job_id = 20956421;
  element.array_task_id = 0;
  element.end = test::utc("2026-11-29T21:01:05");
  v.push_back(element);
  AccountingRecord cancelled = record(20956430, JobState::kCancelled);
  cancelled.cancelled_by_uid = 0;
  cancelled.end = test::utc("2026-11-29T21:02:00");
  v.push_back(cancelled);
  return v;
}

std::string sacct(const std::vector<std::string>& args) {
  auto opts = parse_sacct_options(args, {});
  EXPECT_TRUE(opts.ok()) << (opts.ok() ? "" : opts.error().text);
  if (!opts.ok()) return "";
  CommandOutput out = render_sacct(*opts, client_records(), "alice", test::utc("2026-11-29T22:00:00"));
  EXPECT_EQ(out.err, "");
  return out.out;
}

// submitit: `sacct -o JobID,State,NodeList --parsable2 -j <ids>`; column names
// from the header line, ids with '.' skipped, compressed arrays recognised.
TEST_F(Clients, SubmititSacct) {
  auto lines = lines_of(sacct({"-o", "JobID,State,NodeList", "--parsable2", "-j", "20956420,20956421,20956430"}));
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(split(lines[0], '|'), (std::vector<std::string>{"JobID", "State", "NodeList"}));
  std::regex array(R"(\d+_\[(\d+(-\d+)?,?)+(%\d+)?\])");
  std::map<std::string, std::string> state;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    auto f = split(lines[i], '|');
    ASSERT_EQ(f.size(), 3u);
    if (f[0].find('.') != std::string::npos) continue;
    state[f[0]] = f[1];
  }
  EXPECT_EQ(state["20956420"], "RUNNING");
  EXPECT_EQ(state["20956421_[2-4%25]"], "PENDING");
  EXPECT_TRUE(std::regex_match("20956421_[2-4%25]", array));
  EXPECT_EQ(state["20956421_0"], "COMPLETED");
  EXPECT_EQ(state["20956430"], "CANCELLED by 0");  // counts as finished for submitit
}

// snakemake: `sacct -X --parsable2 --clusters all --noheader
// --format=JobIdRaw,State --starttime <2 days ago> --endtime now --name <uuid>`.
TEST_F(Clients, SnakemakeSacctStatus) {
  auto lines = lines_of(sacct({"-X", "--parsable2", "--clusters", "all", "--noheader", "--format=JobIdRaw,State",
                               "--starttime", "2026-11-27T22:00", "--endtime", "now", "--name", "0f6c-uuid"}));
  EXPECT_EQ(lines, (std::vector<std::string>{"20956420|RUNNING", "20956421|PENDING", "20956422|COMPLETED",
                                             "20956430|CANCELLED by 0"}));
  // Efficiency report fields, nine '|'-separated columns.
  for (const auto& l : lines_of(sacct({"--name=0f6c-uuid", "--parsable2", "--noheader",
                                       "--format=JobID,JobName,Comment,Elapsed,TotalCPU,NNodes,NCPUS,MaxRSS,ReqMem"})))
    EXPECT_EQ(split(l, '|').size(), 9u) << l;
}

// Prometheus gpus.go: `sacct -a -X --format=Allocgres --state=RUNNING --noheader --parsable2`.
TEST_F(Clients, PrometheusExporterGpus) {
  auto records = client_records();
  records[0].alloc_tres = {{"cpu", 1}, {"gres/gpu", 2}, {"gres/gpu:a100", 2}};
  auto opts = parse_sacct_options({"-a", "-X", "--format=Allocgres", "--state=RUNNING", "--noheader", "--parsable2"}, {});
  ASSERT_TRUE(opts.ok());
  EXPECT_EQ(render_sacct(*opts, records, "root", test::utc("2026-11-29T22:00:00")).out, "gpu:2\n");
}

// Open OnDemand: `sacct -P --delimiter \x1F -n --units G -o User,...,ReqTRES`.
TEST_F(Clients, OpenOnDemandSacct) {
  std::string fields = "User,Group,JobId,JobName,Elapsed,ReqMem,AllocCPUS,ReqCPUS,Timelimit,State,TotalCPU,MaxRSS,"
                       "Partition,Submit,Start,End,ReqTRES";
  auto lines = lines_of(sacct({"-P", "--delimiter", "\x1F", "-n", "--units", "G", "-o", fields, "-j", "20956420"}));
  ASSERT_EQ(lines.size(), 2u);  // the job and its batch step
  for (const auto& l : lines) EXPECT_EQ(split(l, '\x1F').size(), 17u) << l;
  // ReqMem as asked whatever --units says, and only on the job's line (Slurm 22.05).
  EXPECT_EQ(split(lines[0], '\x1F')[5], "8G");
  EXPECT_EQ(split(lines[1], '\x1F')[5], "");
}

}  // namespace
}  // namespace drover::cli
