// sacct against real Slurm 22.05 output (testdata/slurm-22.05/sacct_*.txt),
// the parsable modes, and the parse rules of submitit, snakemake, the
// Prometheus exporter and Open OnDemand (clients.md).
#include "cli/sacct_output.hpp"

#include <gtest/gtest.h>

#include <regex>

#include "cli/cli_test_support.hpp"
#include "cli/sacct_internal.hpp"
#include "common/strings.hpp"

namespace drover::cli {
namespace {

using test::utc;

AccountingRecord job(int64_t id, const char* name, const char* part, JobState st, const char* start, const char* end,
                     int64_t cpus, TresMap alloc) {
  AccountingRecord r;
  r.job_id = id;
  r.job_name = name;
  r.partition = part;
  r.account = "research";
  r.qos = "normal";
  r.user = "alice";
  r.uid = 2001;
  r.group = "alice";
  r.gid = 2001;
  r.state = st;
  r.submit = r.eligible = utc("2026-11-29T21:51:00");
  r.start = start ? utc(start) : kNoTime;
  r.end = end ? utc(end) : kNoTime;
  r.alloc_cpus = r.req_cpus = cpus;
  r.nnodes = 1;
  r.alloc_tres = std::move(alloc);
  r.time_limit = 3600;
  r.node_list = "gpu01";
  return r;
}

// The batch step of `j`: same times and TRES without billing.
AccountingRecord batch_step(const AccountingRecord& j) {
  AccountingRecord s = j;
  s.step = "batch";
  s.job_name = "batch";
  s.partition.clear();
  s.alloc_tres.erase("billing");
  s.time_limit = kNotSet;
  return s;
}

TresMap tres(int64_t cpus, std::string gpu_type = "", int64_t gpus = 0) {
  TresMap t{{"billing", cpus}, {"cpu", cpus}, {"mem", 4096 * cpus}, {"node", 1}};
  if (gpus > 0) {
    t["gres/gpu"] = gpus;
    t["gres/gpu:" + gpu_type] = gpus;
  }
  return t;
}

std::vector<AccountingRecord> anchor_records() {
  std::vector<AccountingRecord> v;
  auto add = [&](AccountingRecord j) {
    v.push_back(j);
    v.push_back(batch_step(j));
  };
  AccountingRecord gpu = job(93, "env-gpu", "training", JobState::kCompleted, "2026-11-29T21:51:20",
                             "2026-11-29T21:51:21", 1, tres(1, "h100", 2));
  gpu.alloc_tres["mem"] = 4096;
  add(gpu);
  AccountingRecord cpu = job(95, "env-cpu", "compute", JobState::kCompleted, "2026-11-29T21:51:22",
                             "2026-11-29T21:51:22", 4, tres(4));
  add(cpu);
  for (int64_t t = 0; t < 3; ++t) {
    AccountingRecord a = job(96 + t, "env-array", "compute", JobState::kCompleted, "2026-11-29T21:51:25",
                             "2026-11-29T21:51:25", 1, tres(1));
    a.array_job_id = 96;
    a.array_task_id = t;
    add(a);
  }
  AccountingRecord run = job(107, "train-gpu2", "training", JobState::kRunning, "2026-11-29T21:51:38", nullptr, 1,
                             tres(1, "a100", 2));
  run.alloc_tres["mem"] = 4096;
  add(run);
  AccountingRecord cancelled = job(108, "train-wait", "training", JobState::kCancelled, nullptr,
                                   "2026-11-29T21:52:15", 1, {});
  cancelled.cancelled_by_uid = 2001;
  cancelled.node_list.clear();
  v.push_back(cancelled);
  return v;
}

CommandOutput run_sacct(const std::vector<std::string>& args, const std::vector<AccountingRecord>& records,
                        UnixTime now = utc("2026-11-29T21:52:14")) {
  auto opts = parse_sacct_options(args, {});
  EXPECT_TRUE(opts.ok()) << (opts.ok() ? "" : opts.error().text);
  if (!opts.ok()) return {};
  return render_sacct(*opts, records, "alice", now);
}

class SacctGolden : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { test::use_utc(); }
};

TEST_P(SacctGolden, MatchesRealSlurmByteForByte) {
  test::Golden g = test::read_golden(GetParam());
  CommandOutput out = run_sacct(test::golden_args(g.command), anchor_records());
  EXPECT_EQ(out.out, g.output);
  EXPECT_EQ(out.err, "");
  EXPECT_EQ(out.exit_code, g.exit_code);
}

INSTANTIATE_TEST_SUITE_P(AnchorAccounting, SacctGolden,
                         ::testing::Values("sacct_default.txt", "sacct_gpu_job.txt", "sacct_array_job.txt",
                                           "sacct_running_gpu.txt", "sacct_cancelled.txt"), [](const auto& i) { return test::test_name(i.param); });

TEST(SacctOptions, HelpformatLaysOutNamesAsSacct) {
  auto opts = parse_sacct_options({"-e"}, {});
  ASSERT_TRUE(opts.ok());
  std::string out = render_sacct(*opts, {}, "alice", 0).out;
  // The first line of Slurm 22.05's `sacct -e`: AllocGRES, which it had removed, is not listed (Drover
  // takes it by name).
  EXPECT_EQ(out.substr(0, out.find('\n')), "Account             AdminComment        AllocCPUS           AllocNodes         ");
  EXPECT_EQ(out.substr(out.size() - 20), "WorkDir            \n");
}

TEST(SacctOptions, UnknownFieldAndVersion) {
  // Slurm 22.05's two lines for a unit it does not know (anchor cluster).
  auto unit = parse_sacct_options({"--units=X"}, {});
  ASSERT_FALSE(unit.ok());
  EXPECT_EQ(unit.error().text, "sacct: error: Invalid unit type 'X'. Possible options are 'KMGTP'\nsacct: fatal: Invalid unit type\n");
  EXPECT_EQ(unit.error().exit_code, 1);
  auto opts = parse_sacct_options({"-o", "foo"}, {});
  ASSERT_TRUE(opts.ok());
  CommandOutput out = render_sacct(*opts, {}, "alice", 0);
  EXPECT_EQ(out.err, "sacct: error: Invalid field requested: \"foo\"\n");
  EXPECT_EQ(out.exit_code, 1);
  auto v = parse_sacct_options({"-V"}, {});
  EXPECT_EQ(render_sacct(*v, {}, "alice", 0).out, "slurm 22.05.8\n");
}

// sacct -B / --env-vars print each named job's script or environment as
// Slurm 22.05 does (the layout captured on the anchor cluster with
// AccountingStoreFlags=job_script,job_env): a title, 80 dashes, the text, a
// blank line; NONE for a job without a script; nothing for a job whose
// script the controller did not send (another user's).
TEST(SacctOptions, BatchScriptAndEnvVarsPrintWhatWasSubmitted) {
  AccountingRecord mine = job(2007, "scr", "compute", JobState::kCompleted, "2026-11-29T21:51:20",
                              "2026-11-29T21:51:21", 1, {});
  mine.batch_script = "#!/bin/bash\n#SBATCH -J scr\necho hi\n";
  mine.environment = std::vector<std::string>{"PATH=/usr/bin:/bin", "FOO=bar"};
  AccountingRecord element = mine;
  element.job_id = 2012;
  element.array_job_id = 2011;
  element.array_task_id = 2;
  AccountingRecord alloc = job(2010, "interactive", "compute", JobState::kCompleted, "2026-11-29T21:51:20",
                               "2026-11-29T21:51:21", 1, {});
  alloc.batch_script = "NONE";
  alloc.environment = std::vector<std::string>{"NONE"};
  AccountingRecord other = job(2020, "theirs", "compute", JobState::kCompleted, "2026-11-29T21:51:20",
                               "2026-11-29T21:51:21", 1, {});
  const std::vector<AccountingRecord> records{mine, batch_step(mine), alloc, element, other};
  const std::string rule(80, '-');
  EXPECT_EQ(run_sacct({"-B", "-j", "2007,2010,2020,2011_2"}, records).out,
            "Batch Script for 2007\n" + rule + "\n#!/bin/bash\n#SBATCH -J scr\necho hi\n\n"
            "Batch Script for 2010\n" + rule + "\nNONE\n\n"
            "Batch Script for 2011_2\n" + rule + "\n#!/bin/bash\n#SBATCH -J scr\necho hi\n\n");
  EXPECT_EQ(run_sacct({"--env-vars", "-j", "2007.batch"}, records).out,
            "Environment used for 2007 (must be batch to display)\n" + rule + "\nPATH=/usr/bin:/bin\nFOO=bar\n\n");
  auto both = parse_sacct_options({"-B", "--env-vars", "-j", "1"}, {});
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.error().text, "sacct: fatal: Options --batch-script and --env-vars are mutually exclusive\n");
  auto no_ids = parse_sacct_options({"-B"}, {});
  ASSERT_FALSE(no_ids.ok());
  EXPECT_EQ(no_ids.error().text,
            "sacct: fatal: When requesting job scripts you must also request specific jobs with the '-j' option.\n");
  EXPECT_EQ(no_ids.error().exit_code, 1);
}

// -j's ids are checked as Slurm 22.05's sacct checked them on the anchor
// cluster, in its words; a heterogeneous job's +0 names the job itself.
TEST(SacctSelect, JobIdsAreCheckedInSlurmsWords) {
  auto fatal = [](const std::string& ids) {
    auto o = parse_sacct_options({"-j", ids}, {});
    return o ? std::string("accepted") : o.error().text;
  };
  EXPECT_EQ(fatal("12_ab"), "sacct: fatal: Bad job array element specified: 12\n");
  EXPECT_EQ(fatal("12_"), "sacct: fatal: Bad job array element specified: 12\n");
  EXPECT_EQ(fatal("1.x"), "sacct: fatal: Bad step specified: 1\n");
  EXPECT_EQ(fatal("12,abc"), "sacct: fatal: Bad job/step specified: abc\n");
  EXPECT_EQ(fatal("-o"), "sacct: fatal: Bad job/step specified: -o\n");
  for (const char* ok : {"12", "12.batch", "12.extern", "12_1.0", "12+0"}) {
    EXPECT_EQ(fatal(ok), "accepted") << ok;
  }
  auto het = parse_sacct_options({"-j", "12+0.batch"}, {});
  ASSERT_TRUE(het.ok());
  EXPECT_EQ(het->job_ids, std::vector<std::string>{"12.batch"});
}

}  // namespace
}  // namespace drover::cli

namespace drover::cli {
namespace {

// The selection options beyond -j/-u/-A/-r/-s: -g -W -R -C -N -I -i -k -K,
// each keeping only the jobs (with their steps) it names.
// What root's sacct lists of `recs` at 22:00 with `args` then `fixed`.
std::string selected_ids(const std::vector<AccountingRecord>& recs, std::vector<std::string> args,
                         const std::vector<std::string>& fixed) {
  args.insert(args.end(), fixed.begin(), fixed.end());
  auto o = parse_sacct_options(args, {});
  EXPECT_TRUE(o) << (o ? "" : o.error().text);
  if (!o) return std::string();
  auto out = render_sacct(*o, recs, "root", utc("2026-11-29T22:00:00"));
  EXPECT_EQ(out.exit_code, 0) << out.err;
  return out.out;
}

// As Slurm 22.05's sacct showed them on the anchor cluster: --units converts ReqMem and the memory in
// AllocTRES/ReqTRES (16G is 16384M, 16777216K); a step's User, Group and WorkDir are blank; Reserved is
// how long the job waited once eligible (now, for a job still waiting); --format=ALL is every field.
TEST(SacctFields, UnitsStepBlanksReservedAndAll) {
  AccountingRecord j = job(212, "cpu-run", "compute", JobState::kRunning, "2026-11-29T21:51:02", nullptr, 4,
                           {{"billing", 4}, {"cpu", 4}, {"mem", 16384}, {"node", 2}});
  j.req_mem_mb = 16384;
  j.req_tres = j.alloc_tres;
  j.work_dir = "/tmp/ql";
  AccountingRecord step = batch_step(j);
  AccountingRecord waiting = job(216, "waits-mem", "highmem", JobState::kPending, nullptr, nullptr, 1, {});
  waiting.req_mem_mb = 1536000;
  std::vector<AccountingRecord> recs = {j, step, waiting};
  auto show = [&](std::vector<std::string> args) {
    return selected_ids(recs, std::move(args), {"-a", "-n", "-P", "-S", "2026-11-29T00:00:00"});
  };
  EXPECT_EQ(show({"-j", "212", "--units=M", "-o", "JobID,ReqMem,AllocTRES"}),
            "212|16384M|billing=4,cpu=4,mem=16384M,node=2\n212.batch||cpu=4,mem=16384M,node=2\n");
  EXPECT_EQ(show({"-j", "212", "--units=K", "-o", "ReqMem"}), "16777216K\n\n");
  EXPECT_EQ(show({"-j", "216", "--units=G", "-o", "ReqMem"}), "1500G\n");
  EXPECT_EQ(show({"-j", "212", "--noconvert", "-o", "JobID,ReqMem,AllocTRES"}),
            "212|16384M|billing=4,cpu=4,mem=16384M,node=2\n212.batch||cpu=4,mem=16384M,node=2\n");
  EXPECT_EQ(show({"-j", "212", "-o", "JobID,User,Group,WorkDir,Reserved"}),
            "212|alice|alice|/tmp/ql|00:00:02\n212.batch||||\n");
  j.uid = 1000;
  j.gid = 1000;
  recs = {j, batch_step(j), waiting};
  EXPECT_EQ(show({"-j", "212", "-o", "JobID,UID,GID"}), "212|1000|1000\n212.batch||\n");  // Slurm's steps: blank
  recs[0].qos_id = 3;  // the QOS's id, as sacctmgr numbers it (Slurm 22.05: QOSRAW 1 for normal)
  recs[1].qos_id = 3;
  EXPECT_EQ(show({"-j", "212", "-o", "JobID,QOSRAW"}), "212|3\n212.batch|\n");
  EXPECT_EQ(show({"-j", "216", "-o", "Reserved"}), "00:09:00\n");  // eligible 21:51, now 22:00
  // ResvCPU: Reserved times the job's CPUs (Slurm 22.05: 1 s of a 2-CPU job is 00:00:02, RAW 2); blank
  // on steps. WCKeyID is 0 on the job's line, blank on its steps'.
  EXPECT_EQ(show({"-j", "212", "-o", "JobID,ResvCPU,ResvCPURAW,WCKeyID"}), "212|00:00:08|8|0\n212.batch|||\n");
  EXPECT_EQ(show({"-j", "216", "-o", "ResvCPU,ResvCPURAW"}), "00:09:00|540\n");
  // An exit status of 128 or more is shown less 128 in ExitCode (Slurm 22.05:
  // `exit 137` 9:0, `exit 255` 127:0), whole in DerivedExitCode.
  recs[0].state = JobState::kFailed;
  recs[0].exit_code = 137;
  recs[0].derived_exit_code = 200;
  recs[1].exit_code = 255;
  EXPECT_EQ(show({"-j", "212", "-o", "JobID,ExitCode,DerivedExitCode"}), "212|9:0|200:0\n212.batch|127:0|\n");
  recs[0].exit_code = 127;
  EXPECT_EQ(show({"-j", "212", "-o", "ExitCode"}), "127:0\n127:0\n");
  std::string all = show({"-j", "216", "--format=ALL"});  // every field but AllocGRES
  EXPECT_EQ(std::count(all.begin(), all.end(), '|'), static_cast<long>(sacct_fields().size()) - 2) << all;
  EXPECT_EQ(show({"-j", "216", "-o", "AllocGRES"}), "\n") << "asked for by name, it is still a field";
}

// How Slurm 22.05's sacct read its options (anchor cluster, 2026-12-06):
// blanks around a field's name, a list that ends at an empty name, ReqGRES
// gone, -s states its accounting does not keep, -o beside -l, and getopt's
// line without a pointer to --help.
TEST(SacctOptions, ReadsFieldListsStatesAndOptionsAsSlurm) {
  AccountingRecord j = job(212, "cpu-run", "compute", JobState::kRunning, "2026-11-29T21:51:02", nullptr, 4,
                           {{"billing", 4}, {"cpu", 4}, {"mem", 16384}, {"node", 2}});
  AccountingRecord held = job(217, "held", "compute", JobState::kPending, nullptr, nullptr, 1, {});
  held.eligible = 0;
  std::vector<AccountingRecord> recs = {j, held};
  auto show = [&](std::vector<std::string> args) {
    return selected_ids(recs, std::move(args), {"-a", "-n", "-P", "-S", "2026-11-29T00:00:00"});
  };
  EXPECT_EQ(show({"-j", "212", "-o", "JobID, State , JobName%40"}), "212|RUNNING|cpu-run\n");
  EXPECT_EQ(show({"-j", "212", "-o", "JobID,,State"}), "212\n");
  EXPECT_EQ(show({"-j", "217", "-o", "Reserved"}), "00:00:00\n") << "not eligible yet";
  EXPECT_EQ(show({"-j", "217", "-o", "ConsumedEnergy,ConsumedEnergyRaw"}), "0|0\n") << "pending: 0, as Slurm's";
  recs[1].partition_time_limit = true;  // held, no -t of its own
  EXPECT_EQ(show({"-j", "217", "-o", "Timelimit,TimelimitRaw"}), "Partition_Limit|Partition_Limit\n");
  auto fixed = parse_sacct_options({"-a", "-n", "-X", "-j", "217", "-S", "2026-11-29T00:00:00", "-o",
                                    "Timelimit,TimelimitRaw"}, {});
  ASSERT_TRUE(fixed.ok());
  EXPECT_EQ(render_sacct(*fixed, recs, "root", utc("2026-11-29T22:00:00")).out, "Partition+ Partition+ \n");
  auto render = [&](std::vector<std::string> args) {
    auto o = parse_sacct_options(args, {});
    return o ? render_sacct(*o, recs, "alice", 0) : CommandOutput{"", o.error().text, o.error().exit_code};
  };
  CommandOutput gres = render({"-o", "JobID,ReqGRES"});
  EXPECT_EQ(gres.err, "sacct: fatal: ReqGRES has been removed, please use ReqTRES\n");
  EXPECT_EQ(gres.exit_code, 1);
  EXPECT_EQ(render({"-s", "CG"}).err, "sacct: fatal: job state CG is not supported / accounted\n");
  EXPECT_EQ(render({"-s", "special_exit"}).err, "sacct: fatal: job state special_exit is not supported / accounted\n");
  EXPECT_EQ(render({"-s", "XX"}).err, "sacct: fatal: unrecognized job state value 'XX'\n");
  EXPECT_EQ(render({"-s", "PD,R,CD,CA,F,TO,NF,OOM,BF,DL,PR,RQ,RS,RV,S"}).exit_code, 0);
  CommandOutput both = render({"-o", "JobID", "-l"});
  EXPECT_EQ(both.err, "sacct: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove one "
                      "and retry.\n");
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_EQ(render({"--bogus"}).err, "sacct: unrecognized option '--bogus'\n");
  auto env_format = parse_sacct_options({"-l"}, {{"SACCT_FORMAT", "JobID"}});
  EXPECT_TRUE(env_format) << "SACCT_FORMAT gives way to -l";
}

// -s picks jobs that were in a state within the window, and changes the
// window's defaults (sacct(1), DEFAULT TIME WINDOW; checked on Slurm 22.05:
// `-s CA` alone and `-s CA -S midnight` list nothing, `-s CA -S midnight -E
// now` the jobs cancelled today, `-s R` alone the jobs running now).
TEST(SacctSelect, StatesAreJobsInThatStateWithinTheWindow) {
  std::vector<AccountingRecord> recs = {
      job(1, "done", "compute", JobState::kCompleted, "2026-11-29T21:51:10", "2026-11-29T21:52:00", 1, {}),
      job(2, "run", "compute", JobState::kRunning, "2026-11-29T21:51:10", nullptr, 1, {}),
      job(3, "wait", "compute", JobState::kPending, nullptr, nullptr, 1, {}),
      job(4, "gone", "compute", JobState::kCancelled, nullptr, "2026-11-29T21:55:00", 1, {})};
  auto ids = [&](std::vector<std::string> args) {
    return selected_ids(recs, std::move(args), {"-a", "-X", "-n", "-P", "-o", "JobID"});
  };
  EXPECT_EQ(ids({}), "1\n2\n3\n4\n");  // since midnight
  EXPECT_EQ(ids({"-s", "CD"}), "");        // from now: it ended before
  EXPECT_EQ(ids({"-s", "CD,CA", "-S", "2026-11-29T00:00:00"}), "");  // the window ends where it starts
  EXPECT_EQ(ids({"-s", "CD,CA", "-S", "2026-11-29T00:00:00", "-E", "now"}), "1\n4\n");
  EXPECT_EQ(ids({"-s", "CA", "-S", "2026-11-29T21:54:00", "-E", "2026-11-29T21:56:00"}), "4\n");
  EXPECT_EQ(ids({"-s", "R"}), "2\n");
  EXPECT_EQ(ids({"-s", "R", "-S", "2026-11-29T21:00:00", "-E", "2026-11-29T21:51:00"}), "");  // not started yet
  EXPECT_EQ(ids({"-s", "PD,R"}), "2\n3\n");
  EXPECT_EQ(ids({"-s", "PD", "-S", "2026-11-29T21:50:00", "-E", "2026-11-29T21:50:30"}), "");  // not submitted yet
  EXPECT_EQ(ids({"-j", "1,2", "-s", "CD"}), "1\n");  // from the epoch to now
  EXPECT_EQ(ids({"-j", "1,2", "-s", "CD", "-S", "2026-11-29T00:00:00"}), "");
}

// Without -j, a job is listed only once it became eligible by the window's
// end, as Slurm 22.05's sacct lists them (on the anchor cluster): not one
// held, waiting on a dependency or for its --begin time, pending or
// cancelled so (but -s CA lists a cancelled one); -j names it all the same.
TEST(SacctSelect, JobsNeverEligibleAreListedOnlyByTheirIds) {
  std::vector<AccountingRecord> recs = {
      job(1, "held", "compute", JobState::kPending, nullptr, nullptr, 1, {}),
      job(2, "dep", "compute", JobState::kCancelled, nullptr, "2026-11-29T21:55:00", 1, {}),
      job(3, "begin", "compute", JobState::kPending, nullptr, nullptr, 1, {}),
      job(4, "wait", "compute", JobState::kPending, nullptr, nullptr, 1, {})};
  recs[0].eligible = recs[1].eligible = kNoTime;
  recs[2].eligible = utc("2026-11-29T23:00:00");  // --begin, an hour from now
  auto ids = [&](std::vector<std::string> args) {
    return selected_ids(recs, std::move(args), {"-a", "-X", "-n", "-P", "-o", "JobID"});
  };
  EXPECT_EQ(ids({}), "4\n");
  EXPECT_EQ(ids({"-s", "PD"}), "4\n");
  // A final state named by -s lists it all the same (Slurm 22.05's `-s CA` did).
  EXPECT_EQ(ids({"-s", "PD,CA", "-S", "2026-11-29T21:00:00", "-E", "now"}), "2\n4\n");
  EXPECT_EQ(ids({"-S", "2026-11-29T00:00:00", "-E", "2026-11-30T00:00:00"}), "3\n4\n");  // eligible by then
  EXPECT_EQ(ids({"-j", "1,2,3"}), "1\n2\n3\n");
}

// A plain user's sacct lists their own jobs, unless -a, -u or -j says
// otherwise: Slurm 22.05's showed root's job to alice when she named it
// (anchor cluster; PrivateData=jobs, which the controller applies, hides it).
TEST(SacctSelect, APlainUserSeesTheirOwnJobsUnlessTheyNameOthers) {
  std::vector<AccountingRecord> recs = {
      job(1, "mine", "compute", JobState::kCompleted, "2026-11-29T21:51:00", "2026-11-29T21:52:00", 1, {}),
      job(2, "roots", "compute", JobState::kCompleted, "2026-11-29T21:51:00", "2026-11-29T21:52:00", 1, {})};
  recs[1].user = "root";
  recs[1].uid = 0;
  auto ids = [&](std::vector<std::string> args) {
    for (const char* a : {"-X", "-n", "-P", "-o", "JobID"}) args.push_back(a);
    auto o = parse_sacct_options(args, {});
    EXPECT_TRUE(o) << (o ? "" : o.error().text);
    return o ? render_sacct(*o, recs, "alice", utc("2026-11-29T22:00:00")).out : std::string();
  };
  EXPECT_EQ(ids({}), "1\n");
  EXPECT_EQ(ids({"-a"}), "1\n2\n");
  EXPECT_EQ(ids({"-u", "root"}), "2\n");
  EXPECT_EQ(ids({"-j", "2"}), "2\n");
  EXPECT_EQ(ids({"-j", "1,2", "-u", "alice"}), "1\n");
}

// A window that ends before it starts is refused with Slurm 22.05's words
// (checked on its sacct): -S after now with no -E, -E before today's
// midnight with no -S, -S after -E; with -s, -S alone is a one-moment window.
TEST(SacctSelect, AWindowThatEndsBeforeItStartsIsRefused) {
  const UnixTime now = utc("2026-11-29T22:00:00");
  auto run = [&](std::vector<std::string> args) {
    auto o = parse_sacct_options(args, {});
    EXPECT_TRUE(o) << (o ? "" : o.error().text);
    return o ? render_sacct(*o, {}, "root", now) : CommandOutput{};
  };
  auto refused = [&](std::vector<std::string> args, UnixTime start, UnixTime end) {
    auto out = run(args);
    EXPECT_EQ(out.exit_code, 1);
    EXPECT_EQ(out.out, "");
    EXPECT_EQ(out.err, "sacct: error: Start time (" + format_timestamp(start) + ") requested is after end time (" +
                           format_timestamp(end) + ").\n");
  };
  refused({"-S", "now+1hour"}, now + 3600, now);
  refused({"-j", "1", "-S", "now+1hour"}, now + 3600, now);
  refused({"-E", "2026-11-28T00:00:00"}, utc("2026-11-29T00:00:00"), utc("2026-11-28T00:00:00"));
  refused({"-S", "2026-11-29T10:00:00", "-E", "2026-11-29T09:00:00"}, utc("2026-11-29T10:00:00"),
          utc("2026-11-29T09:00:00"));
  EXPECT_EQ(run({"-s", "CD", "-S", "now+1hour"}).exit_code, 0);
  EXPECT_EQ(run({"-S", "now-1hour", "-E", "now+1hour"}).exit_code, 0);
}

TEST(SacctSelect, GroupWckeyReasonConstraintNodesCountsAndTimeLimits) {
  auto rec = [](int64_t id, const char* node_list, int64_t cpus, int64_t nodes, Seconds limit) {
    AccountingRecord r = job(id, "j", "compute", JobState::kCompleted, "2026-11-29T21:51:10", "2026-11-29T21:52:00",
                             cpus, {{"cpu", cpus}});
    r.node_list = node_list;
    r.nnodes = nodes;
    r.time_limit = limit;
    return r;
  };
  std::vector<AccountingRecord> recs = {rec(1, "cpu01", 1, 1, 600), rec(2, "cpu[02-03]", 8, 2, 7200),
                                        rec(3, "gpu01", 4, 1, kInfinite)};
  recs[0].group = "physics";
  recs[0].gid = 3000;
  recs[1].wckey = "proj";
  recs[1].constraints = "h100&nvme";
  recs[2].state = JobState::kPending;
  recs[2].reason = "Dependency";
  recs[0].flags = "SchedMain,StartRecieved";
  recs[1].flags = "SchedBackfill,StartRecieved";
  AccountingRecord step = recs[1];
  step.step = "batch";
  recs.insert(recs.begin() + 2, step);
  auto ids = [&](std::vector<std::string> args) {
    return selected_ids(recs, std::move(args), {"-a", "-n", "-P", "-o", "JobID", "-S", "2026-11-29T00:00:00"});
  };
  EXPECT_EQ(ids({"-g", "physics"}), "1\n");
  EXPECT_EQ(ids({"--gid=3000"}), "1\n");
  EXPECT_EQ(ids({"-W", "proj"}), "2\n2.batch\n");
  EXPECT_EQ(ids({"-R", "dependency"}), "3\n");
  EXPECT_EQ(ids({"-C", "nvme,h100"}), "2\n2.batch\n");
  EXPECT_EQ(ids({"-C", "nvme,a100"}), "");
  EXPECT_EQ(ids({"-N", "cpu03"}), "2\n2.batch\n");
  EXPECT_EQ(ids({"-N", "gpu01,cpu01"}), "1\n3\n");
  EXPECT_EQ(ids({"-I", "4-"}), "2\n2.batch\n3\n");
  EXPECT_EQ(ids({"--ncpus=1"}), "1\n");
  EXPECT_EQ(ids({"-i", "2"}), "2\n2.batch\n");
  // -k alone: that limit exactly; -K alone: no filter; both: a range
  // (sacct(1), and Slurm 22.05 on the anchor cluster). A part of a minute is one.
  EXPECT_EQ(ids({"-k", "120"}), "2\n2.batch\n");
  EXPECT_EQ(ids({"-k", "9:30"}), "1\n");
  EXPECT_EQ(ids({"-k", "60"}), "");
  EXPECT_EQ(ids({"-K", "1:00:00"}), "1\n2\n2.batch\n3\n");
  EXPECT_EQ(ids({"-k", "10", "-K", "2:00:00"}), "1\n2\n2.batch\n");
  EXPECT_EQ(ids({"-k", "11", "-K", "2:00:00"}), "2\n2.batch\n");
  EXPECT_EQ(ids({"-k", "UNLIMITED"}), "3\n");
  EXPECT_EQ(ids({"-k", "60", "-K", "UNLIMITED"}), "2\n2.batch\n3\n");
  for (const char* bad_limit : {"0", "00:00:00", "abc"}) {
    auto zero = parse_sacct_options({"-k", bad_limit}, {});
    ASSERT_FALSE(zero) << bad_limit;
    EXPECT_EQ(zero.error().text, "sacct: fatal: Invalid time limit specification\n");
  }
  auto bad = parse_sacct_options({"-I", "8-2"}, {});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().text, "sacct: error: Invalid CPU count range: 8-2 (MIN or MIN-MAX)\n");
  // -F/--flags: Slurm's job flags, any case, any of them; its spelling
  // "StartRecieved" (checked on Slurm 22.05: "StartReceived" is refused).
  EXPECT_EQ(ids({"--flags=schedbackfill"}), "2\n2.batch\n");
  EXPECT_EQ(ids({"-F", "SchedSubmit,SchedMain"}), "1\n");
  EXPECT_EQ(ids({"-F", "StartRecieved"}), "1\n2\n2.batch\n");
  auto flags = parse_sacct_options({"--flags=StartReceived"}, {});
  ASSERT_FALSE(flags);
  EXPECT_EQ(flags.error().text, "sacct: error: str_2_job_flags: Invalid job flag StartReceived\n");
  EXPECT_EQ(flags.error().exit_code, 1);
  auto o = parse_sacct_options({"-a", "-P", "-n", "-o", "JobID,Flags", "-S", "2026-11-29T00:00:00"}, {});
  ASSERT_TRUE(o);
  EXPECT_EQ(render_sacct(*o, recs, "root", utc("2026-11-29T22:00:00")).out,
            "1|SchedMain,StartRecieved\n2|SchedBackfill,StartRecieved\n2.batch|\n3|\n");
}

}  // namespace
}  // namespace drover::cli
