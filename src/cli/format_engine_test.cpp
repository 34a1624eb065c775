// The format engine's rules, each case an output observed from real Slurm
// 22.05.8 for the same format string (see testdata/README.md for how).
#include "cli/format_engine.hpp"

#include <gtest/gtest.h>

#include "cli/cli_test_support.hpp"
#include "cli/sinfo_output.hpp"
#include "cli/squeue_output.hpp"

namespace drover::cli {
namespace {

using test::utc;

// Three jobs as on the private instance: pending, pending array, running.
std::vector<JobView> three_jobs() {
  JobView pending;
  pending.job_id = 8;
  pending.name = "never-nodes";
  pending.partition = "compute";
  pending.user = "root";
  pending.reason = "PartitionNodeLimit";
  pending.time_limit = 7 * 86400;
  JobView array = pending;
  array.job_id = 4;
  array.array_job_id = 4;
  array.array_pending_tasks = {2, 3, 4, 5, 6, 7, 8, 9};
  array.array_max_running = 2;
  array.name = "array-thr";
  array.reason = "JobArrayTaskLimit";
  JobView running = pending;
  running.job_id = 1;
  running.name = "cpu-run1";
  running.state = JobState::kRunning;
  running.reason = "None";
  running.nodes = "cpu01";
  running.time_limit = 3 * 3600;
  running.start_time = utc("2026-11-29T23:22:12");
  return {pending, array, running};
}

CommandOutput squeue(std::vector<std::string> args) {
  test::use_utc();
  auto opts = parse_squeue_options(args, {});
  EXPECT_TRUE(opts.ok()) << (opts.ok() ? "" : opts.error().text);
  return opts.ok() ? render_squeue(*opts, three_jobs(), utc("2026-11-30T00:00:56")) : CommandOutput{};
}

struct Case {
  std::vector<std::string> args;
  std::string out;
  std::string err;
};

class SqueueFormatRules : public ::testing::TestWithParam<Case> {};

TEST_P(SqueueFormatRules, PrintAsSlurmDoes) {
  CommandOutput got = squeue(GetParam().args);
  EXPECT_EQ(got.out, GetParam().out);
  EXPECT_EQ(got.err, GetParam().err);
}

INSTANTIATE_TEST_SUITE_P(
    Observed, SqueueFormatRules,
    ::testing::Values(
        // Widths cut values and headers; an unknown letter ('-') is reported
        // and its text printed; a reason is cut, a node list is not.
        Case{{"-o", "%.3i|%5j|%-4P|%10T|%.1R"},
             "JOB|NAME |%-4P|STATE     |NODELIST(REASON)\n"
             "  8|never|%-4P|PENDING   |(\n"
             "4_[|array|%-4P|PENDING   |(\n"
             "  1|cpu-r|%-4P|RUNNING   |cpu01\n",
             "squeue: error: Invalid job format specification: -\n"},
        // "%%" prints nothing; "%5 " is unknown (type ' ') and printed as is.
        Case{{"-h", "-o", "%.3i %20j%%x %5 %q"},
             "  8 never-nodes          %5 (null)\n"
             "4_[ array-thr            %5 (null)\n"
             "  1 cpu-run1             %5 (null)\n",
             "squeue: error: Invalid job format specification:  \n"},
        // Durations are printed whole; their headers are cut.
        Case{{"-j", "1", "-o", "%.2l|%.2M|%.2N|%.2j|%.2R"},
             "TI|TI|NODELIST|NA|NODELIST(REASON)\n3:00:00|38:44|cpu01|cp|cpu01\n", ""},
        // Left-aligned columns cut every header and value, node lists and durations too (Slurm 22.05 on
        // the anchor cluster: "%10R|%5N|%.5N|%3M|%.3M" heads NODELIST(R|NODEL|NODELIST|TIM|TIM).
        Case{{"-j", "1", "-o", "%10R|%5N|%.5N|%3M|%.3M|%4l"},
             "NODELIST(R|NODEL|NODELIST|TIM|TIM|TIME\ncpu01     |cpu01|cpu01|38:|38:44|3:00\n", ""},
        // -O: empty entries (a trailing comma, ",,") are skipped, as Slurm 22.05 does.
        Case{{"-h", "-j", "1", "-O", ",JobID:3,,Name:4,"}, "1  cpu-\n", ""},
        // -O: 20 wide by default, ":[.]size suffix", no separators, all cut.
        Case{{"-O", "JobID,Name:5,Partition:.12,StateCompact:3x,State:.4|"},
             "JOBID               NAME    PARTITIONST xSTAT|\n"
             "8                   never     computePD xPEND|\n"
             "4                   array     computePD xPEND|\n"
             "1                   cpu-r     computeR  xRUNN|\n",
             ""},
        // ":" with a suffix but no size takes the natural width.
        Case{{"-h", "-O", "Name:|,JobID:|,State:"},
             "never-nodes|8|PENDING\narray-thr|4|PENDING\ncpu-run1|1|RUNNING\n", ""},
        Case{{"-j", "8", "-o", "%.i|%.0j|%0j|"}, "JOBID|NAME|NAME|\n8|never-nodes|never-nodes|\n", ""},
        // Literal text before the first field is kept (Prometheus: "-o %A,%T,%r").
        Case{{"-h", "-j", "8", "-o", " %A,%T,%r"}, " 8,PENDING,PartitionNodeLimit\n", ""},
        // -r expands a pending array; %K is the index, %A the record's id.
        Case{{"-h", "-r", "-j", "4", "-o", "%i %A %K %F"},
             "4_2 4 2 4\n4_3 4 3 4\n4_4 4 4 4\n4_5 4 5 4\n4_6 4 6 4\n4_7 4 7 4\n4_8 4 8 4\n4_9 4 9 4\n", ""},
        // A task of a pending array asked for by id is shown alone.
        Case{{"-h", "-j", "4_5", "-o", "%i %K"}, "4_5 5\n", ""},
        Case{{"-h", "-j", "4", "-o", "%i %K"}, "4_[2-9%2] 2-9%2\n", ""}), [](const auto& i) { return "case" + std::to_string(i.index); });

TEST(SqueueOptions, LongAndFormatAreMutuallyExclusive) {
  auto opts = parse_squeue_options({"-l", "-o", "%i"}, {});
  ASSERT_FALSE(opts.ok());
  EXPECT_EQ(opts.error().text,
            "squeue: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry.\n");
  EXPECT_EQ(opts.error().exit_code, 1);
}

TEST(SqueueOptions, InvalidStateListsTheValidOnes) {
  auto opts = parse_squeue_options({"--states=bogus"}, {});
  ASSERT_FALSE(opts.ok());
  EXPECT_EQ(opts.error().text,
            "squeue: error: Invalid job state specified: bogus\n"
            "squeue: error: Valid job states include: PENDING,RUNNING,SUSPENDED,COMPLETED,CANCELLED,FAILED,TIMEOUT,"
            "NODE_FAIL,PREEMPTED,BOOT_FAIL,DEADLINE,OUT_OF_MEMORY,COMPLETING,CONFIGURING,RESIZING,RESV_DEL_HOLD,"
            "REQUEUED,REQUEUE_FED,REQUEUE_HOLD,REVOKED,SIGNALING,SPECIAL_EXIT,STAGE_OUT,STOPPED\n\n");
}

TEST(SqueueOptions, GetoptErrorsAndInvalidJobIds) {
  auto bogus = parse_squeue_options({"--bogus"}, {});
  ASSERT_FALSE(bogus.ok());
  EXPECT_EQ(bogus.error().text, "squeue: unrecognized option '--bogus'\nTry \"squeue --help\" for more information\n");
  auto ambiguous = parse_squeue_options({"--no"}, {});
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_EQ(ambiguous.error().text,
            "squeue: option '--no' is ambiguous; possibilities: '--noconvert' '--node' '--nodes' '--nodelist' "
            "'--noheader'\nTry \"squeue --help\" for more information\n");
  auto bad_id = parse_squeue_options({"-j", "abc"}, {});
  ASSERT_FALSE(bad_id.ok());
  EXPECT_EQ(bad_id.error().text, "squeue: error: Invalid job id: abc\n");
}

TEST(SqueueOptions, EnvironmentSetsDefaultsAndTheCommandLineWins) {
  auto opts = parse_squeue_options({"-o", "%i"}, {{"SQUEUE_FORMAT", "%j"}, {"SQUEUE_STATES", "all"}});
  ASSERT_TRUE(opts.ok());
  EXPECT_EQ(opts->format, "%i");
  EXPECT_TRUE(opts->all_states);
}

TEST(SqueueOptions, VersionLineIsWhatOpenMpiParses) {
  auto opts = parse_squeue_options({"--version"}, {});
  ASSERT_TRUE(opts.ok());
  EXPECT_EQ(render_squeue(*opts, {}, 0).out, "slurm 22.05.8\n");
}

// sinfo's node-list headers are not cut, its default partition keeps '*'.
TEST(SinfoFormatRules, CutsAsSlurmDoes) {
  test::use_utc();
  auto parts = test::anchor_partitions();
  auto nodes = test::anchor_nodes_busy();
  auto run = [&](std::vector<std::string> args) {
    auto opts = parse_sinfo_options(args, {});
    EXPECT_TRUE(opts.ok());
    return render_sinfo(*opts, parts, nodes, 0);
  };
  EXPECT_EQ(run({"-p", "compute", "-o", "%.2P|%.2N|%.2l|%.2n|"}).out,
            "PA|NODELIST|TI|HOSTNAMES|\nc*|cp|7-|lo|\n");
  EXPECT_EQ(run({"-p", "compute", "-O", "NodeList:2,Partition:2,StateLong:2,Time:2"}).out,
            "NOPASTTI\ncpc*mi7-\ncpc*id7-\n");
  CommandOutput bad = run({"-o", "%x|%P"});
  EXPECT_EQ(bad.err, "Invalid node format specification: x\n");
  CommandOutput bad_long = run({"-O", "Foo"});
  EXPECT_EQ(bad_long.err, "sinfo: error: Invalid job format specification: Foo\n");
}

TEST(ColumnLists, SacctStyleWidthsJustificationAndCutting) {
  std::vector<ColumnInfo> cols = {{"JobID", "JobID", 12, false, CutStyle::kPlus},
                                  {"JobName", "JobName", 10, true, CutStyle::kPlus},
                                  {"Elapsed", "Elapsed", 10, true, CutStyle::kNever},
                                  {"Submit", "Submit", 19, true, CutStyle::kPlain}};
  auto items = parse_column_list("jobi%3,JobName%-5,Elapsed%3,Submit%5", cols);
  ASSERT_TRUE(items.ok());
  std::vector<std::vector<std::string>> rows = {{"11", "abcdefghijklmnop", "00:00:00", "2026-11-29T23:23:42"}};
  EXPECT_EQ(render_columns(*items, cols, rows, {}),
            "Job JobNa Ela Submi \n--- ----- --- ----- \n 11 abcd+ 00:00:00 2026- \n");
  auto bad = parse_column_list("foo", cols);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "Invalid field requested: \"foo\"");
  ColumnOptions p;
  p.mode = ColumnMode::kParsable;
  p.delimiter = ",";
  EXPECT_EQ(render_columns(*items, cols, rows, p),
            "JobID,JobName,Elapsed,Submit,\n11,abcdefghijklmnop,00:00:00,2026-11-29T23:23:42,\n");
  p.mode = ColumnMode::kParsable2;
  p.delimiter = "XY";
  p.header = false;
  EXPECT_EQ(render_columns(*items, cols, rows, p), "11XYabcdefghijklmnopXY00:00:00XY2026-11-29T23:23:42\n");
}

}  // namespace
}  // namespace drover::cli
