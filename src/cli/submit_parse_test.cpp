// The sbatch/srun/salloc option parser: every option family, #SBATCH
// directives (the seed's templates verbatim, the clients' headers),
// precedence of command line, environment and script, and Slurm's error
// wording and exit codes (each refusal below was produced by Slurm 22.05.8's
// own sbatch/srun/salloc with the same arguments).
#include "cli/job_options.hpp"

#include <gtest/gtest.h>

#include <csignal>

#include <sstream>

#include "cli/cli_test_support.hpp"
#include "cli/sbatch_script.hpp"
#include "common/strings.hpp"

namespace drover::cli {
namespace {

constexpr Seconds kHour = 3600;

struct Files {
  std::map<std::string, std::string> files;
  std::optional<std::string> stdin_text;
};

Files one_file(const std::string& name, const std::string& text) {
  Files f;
  f.files[name] = text;
  return f;
}

SubmitInputs inputs(SubmitCommand cmd, std::vector<std::string> args, const Files& f = {},
                    std::map<std::string, std::string> env = {}) {
  SubmitInputs in;
  in.command = cmd;
  in.args = std::move(args);
  in.env = std::move(env);
  in.now = test::utc("2026-11-29T21:00:00");
  in.read_file = [f](const std::string& path) -> Result<std::string> {
    auto it = f.files.find(path);
    if (it == f.files.end()) {
      if (path == "/dev/stdin" && f.stdin_text) return *f.stdin_text;
      return make_error("no such file");
    }
    return it->second;
  };
  in.read_stdin = [f]() -> Result<std::string> {
    if (f.stdin_text) return *f.stdin_text;
    return make_error("empty");
  };
  return in;
}

JobRequest sbatch_ok(std::vector<std::string> args, const Files& f = {}, std::map<std::string, std::string> env = {}) {
  auto r = parse_submission(inputs(SubmitCommand::kSbatch, std::move(args), f, std::move(env)));
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().text);
  return r.ok() ? r->request : JobRequest{};
}

JobRequest command_ok(SubmitCommand cmd, std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
  auto r = parse_submission(inputs(cmd, std::move(args), {}, std::move(env)));
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().text);
  return r.ok() ? r->request : JobRequest{};
}

CliError refused(SubmitCommand cmd, std::vector<std::string> args, const Files& f = {},
                 std::map<std::string, std::string> env = {}) {
  auto r = parse_submission(inputs(cmd, std::move(args), f, std::move(env)));
  EXPECT_FALSE(r.ok());
  return r.ok() ? CliError{} : r.error();
}

// ---- the seed's templates, verbatim (section 3) ------------------------------

const char* kSeedTraining =
    "#!/bin/bash\n"
    "#SBATCH --partition=training\n"
    "#SBATCH --gres=gpu:8 # 整节点 8 卡（TP=8 打底）\n"
    "#SBATCH --nodes=4 # 4 节点 = 32 卡\n"
    "#SBATCH --ntasks-per-node=8\n"
    "#SBATCH --exclusive # 独占节点，避免干扰\n"
    "#SBATCH --time=48:00:00\n"
    "srun --mpi=pmix bash -c \"torchrun --nnodes=4 --nproc-per-node=8 train.py\"\n";

const char* kSeedPreprocess =
    "#!/bin/bash\n"
    "#SBATCH --partition=compute\n"
    "#SBATCH --cpus-per-task=16\n"
    "#SBATCH --mem=64G\n"
    "#SBATCH --time=12:00:00\n"
    "python preprocess.py --input $SLURM_ARRAY_TASK_ID\n";

// 3.3 as printed has no "#!" line (the seed shows only the directives).
const char* kSeedInference =
    "#SBATCH --partition=compute\n"
    "#SBATCH --gres=gpu:1 # 单卡推理 + 多核 CPU\n"
    "#SBATCH --cpus-per-task=16\n";

TEST(SeedTemplates, TrainingJobDirectivesWithTrailingComments) {
  JobRequest r = sbatch_ok({"train.sh"}, one_file("train.sh", kSeedTraining));
  EXPECT_EQ(r.partition, "training");
  ASSERT_EQ(r.gres.size(), 1u);  // "# 整节点 8 卡" is a comment, as in Slurm
  EXPECT_EQ(r.gres[0], (GresSpec{"gpu", "", 8}));
  EXPECT_EQ(r.nodes, (NodeRange{4, 4}));
  EXPECT_EQ(r.ntasks_per_node, 8);
  EXPECT_EQ(r.sharing, Sharing::kExclusive);
  EXPECT_EQ(r.time_limit, 48 * kHour);
  EXPECT_EQ(r.script, kSeedTraining);
  EXPECT_EQ(default_job_name(r), "train.sh");
  EXPECT_EQ(r.origins.at("nodes").where, "train.sh:4");
}

TEST(SeedTemplates, PreprocessingJob) {
  JobRequest r = sbatch_ok({"prep.sh"}, one_file("prep.sh", kSeedPreprocess));
  EXPECT_EQ(r.partition, "compute");
  EXPECT_EQ(r.cpus_per_task, 16);
  EXPECT_EQ(r.mem_per_node_mb, 64 * 1024);
  EXPECT_EQ(r.time_limit, 12 * kHour);
}

TEST(SeedTemplates, InferenceJobNeedsAnInterpreterLine) {
  CliError e = refused(SubmitCommand::kSbatch, {"infer.sh"}, one_file("infer.sh", kSeedInference));
  EXPECT_EQ(e.text,
            "sbatch: error: This does not look like a batch script.  The first\n"
            "sbatch: error: line must start with #! followed by the path to an interpreter.\n"
            "sbatch: error: For instance: #!/bin/sh\n");
  EXPECT_EQ(e.exit_code, 1);
  JobRequest r = sbatch_ok({"infer.sh"}, one_file("infer.sh", std::string("#!/bin/bash\n") + kSeedInference));
  ASSERT_EQ(r.gres.size(), 1u);
  EXPECT_EQ(r.gres[0].count, 1);
  EXPECT_EQ(r.cpus_per_task, 16);
}

TEST(SeedTemplates, TwoOptionsOnOneDirective) {
  JobRequest r = sbatch_ok({"h.sh"}, one_file("h.sh", "#!/bin/bash\n#SBATCH --gres=gpu:8 --constraint=h100\nhostname\n"));
  EXPECT_EQ(r.constraint, "h100");
  EXPECT_EQ(r.gres[0].count, 8);
}

// ---- directive rules (each checked against Slurm 22.05's sbatch) -------------

struct DirectiveCase {
  const char* line;
  std::vector<std::string> words;
};

class DirectiveWords : public ::testing::TestWithParam<DirectiveCase> {};

TEST_P(DirectiveWords, SplitLikeSlurm) {
  auto d = extract_directives(std::string("#!/bin/bash\n") + GetParam().line + "\ntrue\n");
  std::vector<std::string> words = d.empty() ? std::vector<std::string>{} : d[0].words;
  EXPECT_EQ(words, GetParam().words);
}

INSTANTIATE_TEST_SUITE_P(
    Observed, DirectiveWords,
    ::testing::Values(DirectiveCase{"#SBATCH -J ab#cd", {"-J", "ab"}},
                      DirectiveCase{"#SBATCH -J \"my job\"#x", {"-J", "my job"}},
                      DirectiveCase{"#SBATCH --comment='a # b'", {"--comment=a # b"}},
                      DirectiveCase{"#SBATCH --comment=\"x y\"z", {"--comment=x yz"}},
                      DirectiveCase{"#SBATCH --comment='it''s'", {"--comment=its"}},
                      DirectiveCase{"#SBATCH -J \"q\\\"x\"", {"-J", "q\"x"}},
                      DirectiveCase{"#SBATCH --comment=a\\\\b", {"--comment=a\\b"}},
                      DirectiveCase{"#SBATCH--nice=5", {"--nice=5"}},
                      DirectiveCase{"#SBATCH\t-J tab", {"-J", "tab"}},
                      DirectiveCase{"#SBATCH -J x # -N 3", {"-J", "x"}},
                      DirectiveCase{"#sbatch -J lower", {}},
                      DirectiveCase{"  #SBATCH -J indented", {}}), [](const auto& i) { return "line" + std::to_string(i.index); });

TEST(Directives, StopAtTheFirstCommandNotAtBlankLinesOrComments) {
  const char* script =
      "#!/bin/bash\n\n#SBATCH -J afterblank\n   \n  # indented comment\n#SBATCH --comment=c2\necho hi\n#SBATCH --nice=7\n";
  JobRequest r = sbatch_ok({"s.sh"}, one_file("s.sh", script));
  EXPECT_EQ(r.job_name, "afterblank");
  EXPECT_EQ(r.comment, "c2");
  EXPECT_FALSE(r.nice.has_value());
}

TEST(Directives, ErrorsAreSlurmsAndSayWhere) {
  CliError operand = refused(SubmitCommand::kSbatch, {"e.sh"}, one_file("e.sh", "#!/bin/bash\n#SBATCH -J a b\ntrue\n"));
  EXPECT_EQ(operand.text.substr(0, operand.text.find('\n') + 1),
            "sbatch: error: Invalid directive found in batch script: b\n");
  EXPECT_NE(operand.text.find("e.sh:2"), std::string::npos);
  EXPECT_EQ(operand.exit_code, 255);
  CliError bogus = refused(SubmitCommand::kSbatch, {"e.sh"}, one_file("e.sh", "#!/bin/bash\n#SBATCH --bogus\ntrue\n"));
  EXPECT_EQ(bogus.text, "sbatch: unrecognized option '--bogus'\nTry \"sbatch --help\" for more information\n");
  CliError time = refused(SubmitCommand::kSbatch, {"e.sh"}, one_file("e.sh", "#!/bin/bash\n#SBATCH -t abc\ntrue\n"));
  EXPECT_EQ(time.text.substr(0, time.text.find('\n') + 1), "sbatch: error: Invalid --time specification\n");
  EXPECT_NE(time.text.find("#SBATCH directive at e.sh:2"), std::string::npos) << time.text;
}

TEST(Directives, ScriptRefusals) {
  EXPECT_EQ(refused(SubmitCommand::kSbatch, {"e.sh"}, one_file("e.sh", "")).text, "sbatch: error: Batch script is empty!\n");
  EXPECT_EQ(refused(SubmitCommand::kSbatch, {"e.sh"}, one_file("e.sh", "#!/bin/bash\r\ntrue\r\n")).text,
            "sbatch: error: Batch script contains DOS line breaks (\\r\\n)\n"
            "sbatch: error: instead of expected UNIX line breaks (\\n).\n");
  EXPECT_EQ(refused(SubmitCommand::kSbatch, {"nonexist.sh"}).text, "sbatch: error: Unable to open file nonexist.sh\n");
  EXPECT_EQ(refused(SubmitCommand::kSbatch, {"--wrap", "true", "x.sh"}).text,
            "sbatch: error: Script arguments not permitted with --wrap option\n");
  EXPECT_EQ(refused(SubmitCommand::kSbatch, {"-H"}).text, "sbatch: error: Batch script is empty!\n");
  // Heterogeneous jobs are refused by name, not as a missing file ':' or an
  // invalid directive.
  const std::string tail = " are not supported by Drover; submit each component as a job of its own (a dependency "
                           "can order them)\n";
  EXPECT_EQ(refused(SubmitCommand::kSbatch, {"-n1", ":", "-n2", "h.sh"}).text,
            "sbatch: error: heterogeneous jobs (':' between components)" + tail);
  for (const char* word : {"hetjob", "packjob"}) {
    CliError het = refused(SubmitCommand::kSbatch, {"h.sh"},
                           one_file("h.sh", std::string("#!/bin/bash\n#SBATCH -n1\n#SBATCH ") + word + "\n#SBATCH -n2\nsrun true\n"));
    EXPECT_EQ(het.text, "sbatch: error: heterogeneous jobs ('#SBATCH " + std::string(word) + "' at h.sh:3)" + tail);
    EXPECT_EQ(het.exit_code, 1);
  }
}

// ---- where the script comes from ---------------------------------------------------

TEST(ScriptSources, WrapStdinAndDevStdin) {
  JobRequest wrap = sbatch_ok({"--parsable", "-p", "compute", "-J", "parsable", "-t", "2:00:00", "-o", "/dev/null",
                               "--wrap", "sleep 1800"});
  EXPECT_EQ(wrap.script, "#!/bin/sh\n# This script was created by sbatch --wrap.\n\nsleep 1800\n");
  EXPECT_TRUE(wrap.parsable);
  EXPECT_EQ(default_job_name(wrap), "parsable");
  EXPECT_EQ(default_job_name(sbatch_ok({"--wrap", "hostname"})), "wrap");
  Files in{{}, "#!/bin/bash\n#SBATCH -J fromstdin\ntrue\n"};
  JobRequest from_stdin = sbatch_ok({"-H"}, in);
  EXPECT_EQ(from_stdin.job_name, "fromstdin");
  EXPECT_TRUE(from_stdin.hold);
  JobRequest unnamed = sbatch_ok({}, Files{{}, "#!/bin/bash\ntrue\n"});
  EXPECT_EQ(default_job_name(unnamed), "sbatch");
  JobRequest dev = sbatch_ok({"/dev/stdin"}, Files{{}, "#!/bin/bash\ntrue\n"});
  EXPECT_EQ(default_job_name(dev), "stdin");
  JobRequest args = sbatch_ok({"-p", "compute", "job.sh", "-p", "x"}, one_file("job.sh", "#!/bin/sh\ntrue\n"));
  EXPECT_EQ(args.partition, "compute");  // options after the script are the script's
  EXPECT_EQ(args.argv, (std::vector<std::string>{"-p", "x"}));
}

// ---- real clients' submissions ----------------------------------------------------------

TEST(ClientSubmissions, SubmititHeader) {
  const char* script =
      "#!/bin/bash\n\n# Parameters\n"
      "#SBATCH --error=/tmp/%j_0_log.err\n#SBATCH --exclusive\n#SBATCH --job-name=submitit\n#SBATCH --nodes=1\n"
      "#SBATCH --open-mode=append\n#SBATCH --output=/tmp/%j_0_log.out\n#SBATCH --partition=learnfair\n"
      "#SBATCH --signal=USR2@90\n#SBATCH --time=5\n#SBATCH --wckey=submitit\n\n# command\n"
      "srun --unbuffered --output /tmp/%j_%t_log.out --error /tmp/%j_%t_log.err -vv --cpu-bind none blublu bar\n";
  JobRequest r = sbatch_ok({"submission.sh"}, one_file("submission.sh", script));
  EXPECT_EQ(r.stderr_path, "/tmp/%j_0_log.err");
  EXPECT_EQ(r.open_mode, OpenMode::kAppend);
  EXPECT_EQ(r.signal, (SignalSpec{12, 90, false, false}));
  EXPECT_EQ(r.time_limit, 5 * 60);
  EXPECT_EQ(r.wckey, "submitit");
  // The srun line inside it.
  JobRequest step = command_ok(SubmitCommand::kSrun, {"--unbuffered", "--output", "/tmp/%j_%t_log.out", "--error",
                                                      "/tmp/%j_%t_log.err", "-vv", "--cpu-bind", "none", "blublu", "bar"});
  EXPECT_TRUE(step.unbuffered);
  EXPECT_EQ(step.verbose, 2);
  EXPECT_EQ(step.cpu_bind, "none");
  EXPECT_EQ(step.argv, (std::vector<std::string>{"blublu", "bar"}));
  JobRequest array = sbatch_ok({"--array=0-15%4", "submission.sh"}, one_file("submission.sh", script));
  EXPECT_EQ(array.array->max_running, 4);
  EXPECT_EQ(array.array->task_ids().size(), 16u);
}

TEST(ClientSubmissions, DaskJobqueueShortOptionsWithSpaces) {
  const char* script =
      "#!/usr/bin/env bash\n\n#SBATCH -J dask-worker\n#SBATCH -e /tmp/dask-worker-%J.err\n"
      "#SBATCH -o /tmp/dask-worker-%J.out\n#SBATCH -p debug\n#SBATCH -A myacct\n#SBATCH -n 1\n#SBATCH -N 1\n"
      "#SBATCH --cpus-per-task=2\n#SBATCH --mem=954M\n#SBATCH -t 00:30:00\n\npython -m distributed.cli.dask_worker\n";
  JobRequest r = sbatch_ok({"/tmp/tmpjob.sh"}, one_file("/tmp/tmpjob.sh", script));
  EXPECT_EQ(r.job_name, "dask-worker");
  EXPECT_EQ(r.account, "myacct");
  EXPECT_EQ(r.ntasks, 1);
  EXPECT_EQ(r.nodes, (NodeRange{1, 1}));
  EXPECT_EQ(r.mem_per_node_mb, 954);
  EXPECT_EQ(r.time_limit, 30 * 60);
}

TEST(ClientSubmissions, NextflowHeader) {
  const char* script =
      "#!/bin/bash\n#SBATCH -J nf-hello\n#SBATCH -o /work/.command.log\n#SBATCH --no-requeue\n"
      "#SBATCH --signal B:USR2@30\n#SBATCH -c 4\n#SBATCH -t 51:00:00\n#SBATCH --mem 8192M\n#SBATCH -p long\n"
      "#SBATCH --array 0-9\nbash .command.run\n";
  JobRequest r = sbatch_ok({".command.run"}, one_file(".command.run", script));
  EXPECT_EQ(r.requeue, false);
  EXPECT_EQ(r.signal, (SignalSpec{12, 30, true, false}));
  EXPECT_EQ(r.time_limit, 51 * kHour);
  EXPECT_EQ(r.mem_per_node_mb, 8192);
  EXPECT_EQ(r.array->task_ids().size(), 10u);
}

TEST(ClientSubmissions, SnakemakeArguments) {
  JobRequest r = sbatch_ok({"--parsable", "--job-name", "0f6c", "--output", "logs/rule/%j.log", "--export=ALL",
                            "--comment", "rule_a", "-A", "acct", "-p", "compute", "--clusters", "c1", "-t", "90",
                            "-C", "h100", "--qos=normal", "--mem-per-cpu", "1000", "--nodes=1", "--requeue",
                            "--reservation=resv", "--exclude=cpu04", "--ntasks-per-gpu=1", "--ntasks-per-node=1",
                            "--cpus-per-gpu=8", "--gpus=a100:2", "-D", "/work", "/dev/stdin"},
                           Files{{}, "#!/bin/sh\nsnakemake --rule a\n"});
  EXPECT_TRUE(r.export_env.all);
  EXPECT_EQ(r.clusters, "c1");
  EXPECT_EQ(r.time_limit, 90 * 60);
  EXPECT_EQ(r.mem_per_cpu_mb, 1000);
  EXPECT_EQ(r.requeue, true);
  EXPECT_EQ(r.gpus, (GpuCount{"a100", 2}));
  EXPECT_EQ(r.chdir, "/work");
  JobRequest wrap = sbatch_ok({"--parsable", "--array=1-3", "--gres=gpu:2", "--wrap=snakemake --rule b"});
  EXPECT_EQ(wrap.array->task_ids(), (std::vector<int64_t>{1, 2, 3}));
  JobRequest step = command_ok(SubmitCommand::kSrun, {"-n1", "--cpu-bind=q", "snakemake"});
  EXPECT_EQ(step.ntasks, 1);
  EXPECT_EQ(step.cpu_bind, "q");
}

TEST(ClientSubmissions, OpenOnDemandArguments) {
  JobRequest r = sbatch_ok({"-M", "anchor", "-H", "--no-requeue", "-D", "/home/u", "--mail-user", "u@x", "--mail-type",
                            "ALL", "-J", "ood", "-i", "/dev/null", "-o", "o.txt", "-e", "e.txt", "--reservation",
                            "r1", "-p", "compute", "--priority", "100", "--begin", "2026-12-01T10:00:00", "-A", "acct",
                            "-t", "1:00:00", "-a", "1-4", "--qos", "normal", "--gpus-per-node", "2", "-n", "4", "-d",
                            "after:1,afterok:2:3,afternotok:4,afterany:5", "--export", "ALL,K1,K2", "--parsable"},
                           Files{{}, "#!/bin/bash\nhostname\n"});
  EXPECT_TRUE(r.hold);
  EXPECT_EQ(r.mail_types, kMailBegin | kMailEnd | kMailFail | kMailInvalidDepend | kMailRequeue | kMailStageOut);
  EXPECT_EQ(r.stdin_path, "/dev/null");
  EXPECT_EQ(r.priority, 100);
  EXPECT_EQ(r.begin, test::utc("2026-12-01T10:00:00"));
  EXPECT_EQ(r.gpus_per_node, (GpuCount{"", 2}));
  ASSERT_TRUE(r.dependency);
  EXPECT_EQ(format_dependency(*r.dependency), "after:1,afterok:2:3,afternotok:4,afterany:5");
  EXPECT_TRUE(r.export_env.all);
  EXPECT_EQ(r.export_env.names, (std::vector<std::string>{"K1", "K2"}));
  JobRequest none = sbatch_ok({"--export", "NONE"}, Files{{}, "#!/bin/bash\n"});
  EXPECT_TRUE(none.export_env.none);
  EXPECT_FALSE(none.export_env.all);
}

// Open MPI's launch lines (PRRTE v3 and ORTE 4.x).
TEST(ClientSubmissions, OpenMpiLaunchLines) {
  JobRequest prrte = command_ok(SubmitCommand::kSrun,
                                {"--external-launcher", "--ntasks-per-node=1", "--kill-on-bad-exit", "--no-kill",
                                 "--kill-on-bad-exit=0", "--mpi=none", "--cpu-bind=none", "--jobid=117",
                                 "--nodes=2", "--nodelist=gpu01,gpu02", "--ntasks=2", "prted", "--arg"});
  EXPECT_TRUE(prrte.external_launcher);
  EXPECT_EQ(prrte.kill_on_bad_exit, false);  // the later =0 wins
  EXPECT_TRUE(prrte.no_kill);
  EXPECT_EQ(prrte.mpi, "none");
  EXPECT_EQ(prrte.jobid, 117);
  EXPECT_EQ(prrte.nodelist, "gpu01,gpu02");
  EXPECT_EQ(prrte.argv, (std::vector<std::string>{"prted", "--arg"}));
  JobRequest orte = command_ok(SubmitCommand::kSrun, {"--ntasks-per-node=1", "--kill-on-bad-exit", "--cpu_bind=none",
                                                      "--nodes=4", "--ntasks=4", "orted"});
  EXPECT_EQ(orte.cpu_bind, "none");
  EXPECT_EQ(orte.kill_on_bad_exit, true);
  auto version = parse_submission(inputs(SubmitCommand::kSrun, {"--version"}));
  ASSERT_TRUE(version.ok());
  EXPECT_EQ(version->action, SubmitAction::kPrint);
  EXPECT_EQ(version->output, "slurm 22.05.8\n");
}

// ---- getopt grammar ------------------------------------------------------------------------

TEST(Grammar, EveryArgumentForm) {
  JobRequest r = command_ok(SubmitCommand::kSalloc,
                            {"--partition=compute", "--account", "a1", "-qnormal", "-t", "10", "-Hv", "-N2-4",
                             "--exclusive=user", "--immediate=5", "--no-shell", "--nice", "--parti=compute"});
  EXPECT_EQ(r.partition, "compute");  // a unique abbreviation is accepted
  EXPECT_EQ(r.account, "a1");
  EXPECT_EQ(r.qos, "normal");
  EXPECT_EQ(r.time_limit, 600);
  EXPECT_TRUE(r.hold);
  EXPECT_EQ(r.verbose, 1);
  EXPECT_EQ(r.nodes, (NodeRange{2, 4}));
  EXPECT_EQ(r.sharing, Sharing::kExclusiveUser);
  EXPECT_TRUE(r.immediate);
  EXPECT_EQ(r.immediate_timeout, 5);
  EXPECT_TRUE(r.no_shell);
  EXPECT_EQ(r.kill_command_signal, std::nullopt);
  EXPECT_EQ(command_ok(SubmitCommand::kSalloc, {"-K"}).kill_command_signal, 0);  // the default signal
  EXPECT_EQ(command_ok(SubmitCommand::kSalloc, {"-KUSR1"}).kill_command_signal, SIGUSR1);
  EXPECT_EQ(command_ok(SubmitCommand::kSalloc, {"--kill-command=9"}).kill_command_signal, 9);
  EXPECT_EQ(r.nice, 100);
  // Spellings Slurm 22.05's commands take though their manuals name only the other one (anchor: accepted).
  for (auto cmd : {SubmitCommand::kSbatch, SubmitCommand::kSrun, SubmitCommand::kSalloc}) {
    std::vector<std::string> args = {"--tasks-per-node=3", "--cluster=anchor"};
    if (cmd == SubmitCommand::kSbatch) args.push_back("--wrap");
    args.push_back("true");
    JobRequest a = command_ok(cmd, args);
    EXPECT_EQ(a.ntasks_per_node, 3);
    EXPECT_EQ(a.clusters, "anchor");
  }
  // --hint as Slurm 22.05 records it (ReqB:S:C:T): one thread per core, memory_bound one core per socket;
  // an explicit --threads-per-core wins.
  auto hinted = [](std::vector<std::string> a) {
    a.insert(a.end(), {"--wrap", "true"});
    return command_ok(SubmitCommand::kSbatch, a);
  };
  EXPECT_EQ(hinted({"--hint=nomultithread"}).threads_per_core, 1);
  EXPECT_EQ(hinted({"--hint=compute_bound"}).threads_per_core, 1);
  EXPECT_EQ(hinted({"--hint=memory_bound"}).cores_per_socket, 1);
  EXPECT_EQ(hinted({"--hint=memory_bound"}).threads_per_core, 1);
  EXPECT_EQ(hinted({"--hint=multithread"}).threads_per_core, std::nullopt);
  EXPECT_EQ(hinted({"--hint=nomultithread", "--threads-per-core=2"}).threads_per_core, 2);
  // A comma list, as a public script wrote it and Slurm 22.05's srun took it.
  EXPECT_EQ(hinted({"--hint=nomultithread,memory_bound"}).cores_per_socket, 1);
  // --cpu-bind as public scripts write it, all taken by Slurm 22.05's srun: a singular word, and a
  // map_cpu list that has commas of its own; srun's older --pack-group.
  for (const char* bind : {"--cpu_bind=verbose,core", "--cpu-bind=map_cpu:49,17,1,33", "--cpu-bind=v,mask_cpu:0x3,0xc"}) {
    EXPECT_EQ(command_ok(SubmitCommand::kSrun, {bind, "true"}).cpu_bind, std::string(bind).substr(std::string(bind).find('=') + 1));
  }
  command_ok(SubmitCommand::kSrun, {"--pack-group=0,1", "hostname"});
  // --gpus-per-task needs a task count, which -N or --ntasks-per-node gives too (anchor: accepted).
  EXPECT_EQ(command_ok(SubmitCommand::kSbatch, {"--gpus-per-task=1", "-N", "2", "--wrap", "true"}).nodes,
            (NodeRange{2, 2}));
  EXPECT_EQ(command_ok(SubmitCommand::kSbatch, {"--gpus-per-task=1", "--ntasks-per-node=2", "--wrap", "true"})
                .ntasks_per_node,
            2);
  // SLURM_DISTRIBUTION=plane takes its size from SLURM_DIST_PLANESIZE, as sbatch leaves them for the job's sruns.
  EXPECT_EQ(parse_submission(inputs(SubmitCommand::kSrun, {"true"}, {},
                                    {{"SLURM_DISTRIBUTION", "plane"}, {"SLURM_DIST_PLANESIZE", "2"}}))
                ->request.distribution,
            "plane=2");
  refused(SubmitCommand::kSrun, {"-m", "plane", "true"});
  JobRequest opt = command_ok(SubmitCommand::kSrun, {"-I", "-K", "-l", "-u", "hostname"});
  EXPECT_TRUE(opt.immediate);
  EXPECT_FALSE(opt.immediate_timeout);
  EXPECT_EQ(opt.kill_on_bad_exit, true);
  EXPECT_TRUE(opt.label);
  EXPECT_EQ(opt.argv, (std::vector<std::string>{"hostname"}));
}

struct Refusal {
  SubmitCommand cmd;
  std::vector<std::string> args;
  std::string first_lines;  // Slurm's own lines, exactly
  int exit_code;
};

class Refusals : public ::testing::TestWithParam<Refusal> {};

TEST_P(Refusals, WordedAndExitingAsSlurm) {
  const Refusal& c = GetParam();
  std::vector<std::string> args = c.args;
  if (c.cmd == SubmitCommand::kSbatch) args.insert(args.end(), {"--wrap", "true"});
  if (c.cmd == SubmitCommand::kSrun) args.push_back("true");
  CliError e = refused(c.cmd, args);
  EXPECT_EQ(e.text.substr(0, c.first_lines.size()), c.first_lines) << e.text;
  EXPECT_EQ(e.exit_code, c.exit_code) << e.text;
}

constexpr auto S = SubmitCommand::kSbatch;
constexpr auto R = SubmitCommand::kSrun;
constexpr auto A = SubmitCommand::kSalloc;

INSTANTIATE_TEST_SUITE_P(
    Slurm2205, Refusals,
    ::testing::Values(
        Refusal{S, {"--bogus"}, "sbatch: unrecognized option '--bogus'\nTry \"sbatch --help\" for more information\n", 255},
        Refusal{S, {"-Z"}, "sbatch: invalid option -- 'Z'\nTry \"sbatch --help\" for more information\n", 255},
        Refusal{S, {"--hold=3"}, "sbatch: option '--hold' doesn't allow an argument\n", 255},
        Refusal{S, {"--par=compute"},
                "sbatch: option '--par=compute' is ambiguous; possibilities: '--parsable' '--partition'\n", 255},
        Refusal{S, {"--time=abc"}, "sbatch: error: Invalid --time specification\n", 255},
        Refusal{S, {"-t", "1:2:3:4"}, "sbatch: error: Invalid --time specification\n", 255},
        Refusal{S, {"--mem=12Q"}, "sbatch: error: Invalid --mem specification\n", 255},
        Refusal{S, {"--mem=-5"}, "sbatch: error: Invalid --mem specification\n", 255},
        Refusal{S, {"--signal=FOO@10"}, "sbatch: error: Invalid --signal specification\n", 255},
        Refusal{S, {"--signal=USR1@-1"}, "sbatch: error: Invalid --signal specification\n", 255},
        Refusal{S, {"--open-mode=bogus"}, "sbatch: error: Invalid --open-mode specification\n", 255},
        Refusal{A, {"--kill-command=bogus"}, "salloc: error: Invalid --kill-command specification\n", 255},
        Refusal{A, {"-K=USR1"}, "salloc: error: Invalid --kill-command specification\n", 255},
        Refusal{S, {"--gres=gpu:x:y:z"}, "sbatch: error: Invalid generic resource (gres) specification\n", 1},
        Refusal{S, {"-N", "abc"}, "sbatch: error: \"abc\" is not a valid node count\n", 255},
        Refusal{S, {"-N", "2-1"}, "sbatch: error: Maximum node count 1 is less than minimum node count 2\n", 255},
        Refusal{S, {"-n", "0"}, "sbatch: error: Invalid numeric value \"0\" for --ntasks.\n", 1},
        Refusal{S, {"-c", "0"}, "sbatch: error: Invalid numeric value \"0\" for --cpus-per-task.\n", 1},
        Refusal{S, {"--ntasks-per-node=-1"}, "sbatch: error: Invalid numeric value \"-1\" for --ntasks-per-node.\n", 1},
        Refusal{S, {"--cpus-per-gpu=x"}, "sbatch: error: Invalid numeric value \"x\" for --cpus-per-gpu.\n", 1},
        Refusal{S, {"--threads-per-core=x"}, "sbatch: error: Invalid numeric value \"x\" for --threads-per-core.\n", 1},
        Refusal{S, {"--begin=garbage"},
                "Invalid time specification (pos=0): garbage\nsbatch: error: Invalid --begin specification\n", 255},
        Refusal{S, {"--deadline=foo"},
                "Invalid time specification (pos=0): foo\nsbatch: error: Invalid --deadline specification\n", 255},
        Refusal{S, {"--deadline=now+1hour", "--begin=now+2hours"},
                "sbatch: error: Incompatible begin and deadline time specification\n", 1},
        Refusal{S, {"--mail-type=BOGUS"}, "sbatch: error: Invalid --mail-type specification\n", 255},
        Refusal{S, {"--exclusive=foo"}, "sbatch: error: Invalid --exclusive specification\n", 255},
        Refusal{S, {"--nice=99999999999"}, "sbatch: error: Invalid --nice value, out of range (+/- 2147483645)\n", 255},
        Refusal{S, {"--kill-on-invalid-dep=maybe"}, "sbatch: error: Invalid --kill-on-invalid-dep specification\n", 255},
        Refusal{S, {"--hint=foo"}, "sbatch: error: unrecognized --hint argument \"foo\", see --hint=help\n", 1},
        Refusal{S, {"--distribution=foo"}, "sbatch: error: Invalid --distribution specification\n", 255},
        Refusal{S, {"-m", "plane=3:cyclic"},
                "sbatch: error: Invalid plane size or size not specified\nsbatch: error: Invalid --distribution "
                "specification\n",
                255},
        Refusal{S, {"--time-min=abc"}, "sbatch: error: Invalid --time-min specification\n", 255},
        Refusal{S, {"--tmp=abc"}, "sbatch: error: Invalid --tmp specification\n", 255},
        Refusal{S, {"-Q", "-v"}, "sbatch: error: don't specify both --verbose (-v) and --quiet (-Q)\n", 1},
        Refusal{S, {"--mem-per-cpu=1G", "--mem=2G"},
                "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.\n", 1},
        Refusal{S, {"--mem-per-cpu=1G", "--mem-per-gpu=2G"},
                "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.\n", 1},
        Refusal{S, {"--mem-per-gpu=4G"},
                "sbatch: error: Requested mem_per_tres=gres:gpu:4096 but did not request any GPU.\nsbatch: error: "
                "Invalid generic resource (gres) specification\n",
                1},
        Refusal{S, {"--mem-per-gpu=4G", "--gpus=0"},
                "sbatch: error: Requested mem_per_tres=gres:gpu:4096 but did not request any GPU.\nsbatch: error: "
                "Invalid generic resource (gres) specification\n",
                1},
        Refusal{S, {"--gpus-per-task=2", "-c", "4"},
                "sbatch: error: Failed to validate job spec. --gpus-per-task used without either --gpus or "
                "-n/--ntasks is not allowed.\nsbatch: error: Invalid generic resource (gres) specification\n",
                1},
        Refusal{S, {"--gpus-per-task=2"},
                "sbatch: error: Failed to validate job spec. --gpus-per-task used without either --gpus or "
                "-n/--ntasks is not allowed.\nsbatch: error: Invalid generic resource (gres) specification\n",
                1},
        Refusal{S, {"--gpus-per-socket=1"},
                "sbatch: error: --gpus-per-socket option requires --sockets-per-node specification\nsbatch: error: "
                "Invalid generic resource (gres) specification\n",
                1},
        Refusal{A, {"--gpus-per-socket=1"},
                "salloc: error: --gpus-per-socket option requires --sockets-per-node specification\nsalloc: error: "
                "Invalid generic resource (gres) specification\n",
                1},
        // Slurm refuses these in the controller; Drover checks them before sending, in the same words.
        Refusal{S, {"--batch=x"},
                "sbatch: error: Batch job submission failed: Job --batch option is invalid or not a subset of "
                "--constraints\n",
                1},
        Refusal{S, {"--batch=a100", "-C", "h100"},
                "sbatch: error: Batch job submission failed: Job --batch option is invalid or not a subset of "
                "--constraints\n",
                1},
        Refusal{S, {"--array=abc"}, "sbatch: error: Batch job submission failed: Invalid job array specification\n", 1},
        Refusal{S, {"--array=5-3"}, "sbatch: error: Batch job submission failed: Invalid job array specification\n", 1},
        Refusal{S, {"--array=-1"}, "sbatch: error: Batch job submission failed: Invalid job array specification\n", 1},
        Refusal{S, {"-d", "foo:1"}, "sbatch: error: Batch job submission failed: Job dependency problem\n", 1},
        Refusal{S, {"-d", "afterok:abc"}, "sbatch: error: Batch job submission failed: Job dependency problem\n", 1},
        Refusal{S, {"-d", "expand:5"},
                "sbatch: error: Batch job submission failed: Requested operation not supported on this system\n", 1},
        Refusal{R, {"-d", "afterok:abc"}, "srun: error: Unable to allocate resources: Job dependency problem\n", 1},
        Refusal{R, {"--cpu-bind=foo"}, "srun: error: unrecognized --cpu-bind argument \"foo\"\n", 1},
        Refusal{R, {"--mpi=foo"}, "srun: error: Invalid MPI type 'foo', --mpi=list for acceptable types\n", 1},
        Refusal{R, {"--kill-on-bad-exit=x"}, "srun: error: Invalid numeric value \"x\" for --kill-on-bad-exit.\n", 1},
        Refusal{R, {"--jobid=abc"}, "srun: error: Invalid numeric value \"abc\" for --jobid.\n", 1},
        Refusal{R, {"--open-mode=x"}, "srun: error: Invalid --open-mode specification\n", 255},
        Refusal{R, {"--no-kill=foo"}, "srun: error: Invalid --no-kill specification\n", 255},
        Refusal{R, {"--array=1"}, "srun: unrecognized option '--array=1'\nTry \"srun --help\" for more information\n", 255},
        Refusal{A, {"--immediate=x"}, "salloc: error: Invalid numeric value \"x\" for immediate.\n", 1},
        Refusal{A, {"--test-only"}, "salloc: unrecognized option '--test-only'\n", 255}), [](const auto& i) { return std::string(submit_command_name(i.param.cmd)) + "_" + test::test_name(i.param.args[0]) + "_" + std::to_string(i.index); });

TEST(Grammar, MissingArguments) {
  EXPECT_EQ(refused(S, {"--wrap"}).text,
            "sbatch: option '--wrap' requires an argument\nTry \"sbatch --help\" for more information\n");
  EXPECT_EQ(refused(S, {"--wrap", "true", "-p"}).text,
            "sbatch: option requires an argument -- 'p'\nTry \"sbatch --help\" for more information\n");
}

TEST(Grammar, SlurmsSecondLineIsFollowedByDroversWhereAndWhat) {
  CliError e = refused(S, {"-t", "abc", "--wrap", "true"});
  EXPECT_EQ(e.text,
            "sbatch: error: Invalid --time specification\n"
            "sbatch: error: --time=abc on the command line: use minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS "
            "or UNLIMITED (e.g. 90, 1:30:00, 2-00:00:00)\n");
  CliError env = refused(S, {"--wrap", "true"}, {}, {{"SBATCH_TIMELIMIT", "abc"}});
  EXPECT_NE(env.text.find("from the environment variable SBATCH_TIMELIMIT"), std::string::npos) << env.text;
}

TEST(Replies, WhatSbatchPrintsAfterSubmission) {
  test::use_utc();
  for (const char* name : {"sbatch_plain.txt", "sbatch_parsable.txt"}) {
    test::Golden g = test::read_golden(name);
    auto args = test::golden_args(g.command);
    auto r = parse_submission(inputs(S, args));
    ASSERT_TRUE(r.ok()) << r.error().text;
    int64_t id = std::stoll(g.output.substr(g.output.find_first_of("0123456789")));
    EXPECT_EQ(submission_reply(r->request, id), g.output) << name;
  }
  JobRequest cluster = sbatch_ok({"--parsable", "-M", "anchor", "--wrap", "x"});
  EXPECT_EQ(submission_reply(cluster, 7), "7;anchor\n");
  EXPECT_EQ(submission_reply(sbatch_ok({"-Q", "--wrap", "x"}), 7), "");
  JobRequest t = sbatch_ok({"--test-only", "--wrap", "true"});
  EXPECT_EQ(test_only_reply(t, 14, test::utc("2026-12-12T05:26:55"), 1, "cpu01", "compute"),
            "sbatch: Job 14 to start at 2026-12-12T05:26:55 using 1 processors on nodes cpu01 in partition compute\n");
}

// ---- values ------------------------------------------------------------------------------------

TEST(Values, TimeForms) {
  struct T {
    const char* text;
    Seconds secs;
  };
  for (const T& t : {T{"5", 300}, T{"90", 5400}, T{"00:30:00", 1800}, T{"51:00:00", 51 * kHour}, T{"1:30", 90},
                     T{"2-00:00:00", 2 * 86400}, T{"7-0", 7 * 86400}, T{"1-12", 36 * kHour}, T{"UNLIMITED", kInfinite},
                     T{"infinite", kInfinite}})
    EXPECT_EQ(sbatch_ok({"-t", t.text, "--wrap", "x"}).time_limit, t.secs) << t.text;
}

TEST(Values, MemoryForms) {
  for (auto [text, mb] : std::vector<std::pair<const char*, int64_t>>{
           {"64G", 65536}, {"64GB", 65536}, {"4000", 4000}, {"512M", 512}, {"2048K", 2}, {"1T", 1048576}, {"0", 0}})
    EXPECT_EQ(sbatch_ok({"--mem", text, "--wrap", "x"}).mem_per_node_mb, mb) << text;
}

TEST(Values, ArraySpecs) {
  auto ids = [](const char* s) { return parse_array_spec(s)->task_ids(); };
  EXPECT_EQ(ids("1,3,5-7"), (std::vector<int64_t>{1, 3, 5, 6, 7}));
  EXPECT_EQ(ids("0-9:2"), (std::vector<int64_t>{0, 2, 4, 6, 8}));
  EXPECT_EQ(parse_array_spec("0-15%4")->max_running, 4);
  EXPECT_EQ(format_array_spec(*parse_array_spec("0-15%4")), "0-15%4");
  EXPECT_EQ(format_array_spec(*parse_array_spec("1,3,5-7")), "1,3,5-7");
  EXPECT_EQ(compress_ranges({2, 3, 4, 6, 8, 9}), "2-4,6,8-9");
  EXPECT_FALSE(parse_array_spec("0-2000", 1000).ok());
  EXPECT_FALSE(parse_array_spec("1,,2").ok());
  EXPECT_FALSE(parse_array_spec("0-9:0").ok());
}

TEST(Values, Dependencies) {
  auto d = parse_dependency("afterok:1:2,afterany:3");
  ASSERT_TRUE(d.ok());
  EXPECT_FALSE(d->any_of);
  EXPECT_EQ(d->clauses.size(), 2u);
  EXPECT_EQ(d->clauses[0].targets.size(), 2u);
  auto any = parse_dependency("afterok:1?singleton");
  ASSERT_TRUE(any.ok());
  EXPECT_TRUE(any->any_of);
  EXPECT_EQ(any->clauses[1].type, DependencyType::kSingleton);
  auto delayed = parse_dependency("after:5+10");
  ASSERT_TRUE(delayed.ok());
  EXPECT_EQ(delayed->clauses[0].targets[0].delay, 600);
  auto task = parse_dependency("aftercorr:7_3");
  ASSERT_TRUE(task.ok());
  EXPECT_EQ(task->clauses[0].targets[0].array_task, 3);
  EXPECT_EQ(parse_dependency("123")->clauses[0].type, DependencyType::kAfterAny);
  EXPECT_FALSE(parse_dependency("afterok:1,afterany:2?singleton").ok());
  // Slurm 22.05 takes "+minutes" after any type's job id and shows it back; 0 or less is refused.
  EXPECT_EQ(format_dependency(*parse_dependency("afterok:1+5")), "afterok:1+5");
  EXPECT_EQ(parse_dependency("afterany:1+99999999999")->clauses[0].targets[0].delay, 99999999999 * 60);
  EXPECT_FALSE(parse_dependency("after:1+0").ok());
  EXPECT_FALSE(parse_dependency("afterok:1+-1").ok());
  EXPECT_FALSE(parse_dependency("singleton+1").ok());
}

TEST(Values, DependencyRepeatsCountOnce) {
  // As Slurm shows them: a job named again with the same type is dropped, the first naming (its delay
  // included) kept; another type naming it stays.
  EXPECT_EQ(format_dependency(*parse_dependency("afterok:1,afterok:1")), "afterok:1");
  EXPECT_EQ(format_dependency(*parse_dependency("afterok:1:2,afterany:1")), "afterok:1:2,afterany:1");
  EXPECT_EQ(format_dependency(*parse_dependency("afterok:1:1+2")), "afterok:1");
  EXPECT_EQ(format_dependency(*parse_dependency("afterok:1+3:2:1+2")), "afterok:1+3:2");
  EXPECT_EQ(format_dependency(*parse_dependency("afterok:1?afterok:1")), "afterok:1");
  EXPECT_EQ(format_dependency(*parse_dependency("singleton,singleton")), "singleton");
  EXPECT_EQ(format_dependency(*parse_dependency("afterok:1_2:1_2:1")), "afterok:1_2:1");
}

TEST(Values, SignalsExportsAndFlags) {
  EXPECT_EQ(*parse_signal_spec("SIGUSR1@90"), (SignalSpec{10, 90, false, false}));
  EXPECT_EQ(*parse_signal_spec("R:10"), (SignalSpec{10, 60, false, true}));
  EXPECT_EQ(*parse_signal_spec("B:15"), (SignalSpec{15, 60, true, false}));
  auto e = parse_export_spec("ALL,EDITOR=/bin/emacs,A='x,y'");
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->all);
  EXPECT_EQ(e->assigned, (std::vector<std::pair<std::string, std::string>>{{"EDITOR", "/bin/emacs"}, {"A", "x,y"}}));
  EXPECT_FALSE(parse_export_spec("ALL,NONE").ok());
  // NONE beside variables, as Slurm 22.05 took it: sbatch exports the variables, srun none of them.
  JobRequest nb = sbatch_ok({"--export=NONE,FOO=1", "--wrap", "x"});
  EXPECT_FALSE(nb.export_env.none);
  EXPECT_EQ(nb.export_env.assigned, (std::vector<std::pair<std::string, std::string>>{{"FOO", "1"}}));
  JobRequest ns = command_ok(SubmitCommand::kSrun, {"--export=NONE,FOO=1", "true"});
  EXPECT_TRUE(ns.export_env.none);
  EXPECT_TRUE(ns.export_env.assigned.empty());
  EXPECT_EQ(*parse_mail_type("begin,END"), kMailBegin | kMailEnd);
  JobRequest r = sbatch_ok({"--open-mode=truncate", "--requeue", "--no-requeue", "--test-only", "--wrap", "x"});
  EXPECT_EQ(r.open_mode, OpenMode::kTruncate);
  EXPECT_EQ(r.requeue, false);  // the last of --requeue/--no-requeue wins
  EXPECT_TRUE(r.test_only);
  JobRequest q = sbatch_ok({"-Q", "--priority=TOP", "--wrap", "x"});
  EXPECT_TRUE(q.quiet);
  EXPECT_EQ(q.priority, kPriorityTop);
}

TEST(Values, OptionsDroverDoesNotInterpretAreRecordedAndWarned) {
  auto r = parse_submission(inputs(S, {"--acctg-freq=30", "--wrap", "x"}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->request.uninterpreted.at("--acctg-freq"), "30");
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_EQ(r->warnings[0], "sbatch: warning: --acctg-freq is accepted for compatibility but has no effect in Drover");
}

// What Slurm 22.05 took on the anchor cluster where the refusals above are
// refused: --batch features that -C names, --gpus-per-socket with --sockets-per-node.
TEST(Values, BatchFeaturesWithinTheConstraintAndGpusPerSocketWithSockets) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--batch=h100", "-C", "h100|a100"}, {"--batch=h100&nvme", "-C", "[h100*2&nvme]"},
        {"--gpus-per-socket=1", "--sockets-per-node=2"}}) {
    std::vector<std::string> full = args;
    full.insert(full.end(), {"--wrap", "x"});
    auto r = parse_submission(inputs(S, full));
    EXPECT_TRUE(r.ok()) << args[0] << ": " << (r.ok() ? "" : r.error().text);
  }
}

// Fewer tasks than -N's minimum: one node per task, said as Slurm 22.05's
// sbatch, srun and salloc say it (on the anchor cluster).
TEST(Values, FewerTasksThanNodesTakeOneNodePerTask) {
  auto r = parse_submission(inputs(S, {"-N", "3-5", "-n", "2", "--wrap", "x"}));
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_EQ(r->warnings[0], "sbatch: Warning: can't run 2 processes on 3 nodes, setting nnodes to 2");
  EXPECT_EQ(r->request.nodes->min, 2);
  EXPECT_EQ(r->request.nodes->max, 2);
  auto fits = parse_submission(inputs(S, {"-N", "2", "-n", "2", "--wrap", "x"}));
  ASSERT_TRUE(fits.ok());
  EXPECT_TRUE(fits->warnings.empty());
  EXPECT_EQ(fits->request.nodes->min, 2);
}

// srun drops --ntasks-per-node when -n is a multiple of -N's minimum that
// it cannot spread at that many per node, and says so, as Slurm 22.05's srun
// did on the anchor cluster (-N1 -n2, -N2 -n6 at 2, -N1-2 -n4 at 1); other
// mismatches (-N2 -n3 at 1) are kept for the controller to refuse; sbatch keeps them all.
TEST(Values, SrunDropsTasksPerNodeThatNodesAndTasksContradict) {
  auto r = parse_submission(inputs(SubmitCommand::kSrun, {"-N1", "-n2", "--ntasks-per-node=1", "true"}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->warnings, (std::vector<std::string>{
                             "srun: Warning: can't honor --ntasks-per-node set to 1 which doesn't match the requested "
                             "tasks 2 with the number of requested nodes 1. Ignoring --ntasks-per-node."}));
  EXPECT_FALSE(r->request.ntasks_per_node.has_value());
  EXPECT_FALSE(command_ok(SubmitCommand::kSrun, {"-N2", "-n6", "--ntasks-per-node=2", "true"}).ntasks_per_node);
  EXPECT_FALSE(command_ok(SubmitCommand::kSrun, {"-N1-2", "-n4", "--ntasks-per-node=1", "true"}).ntasks_per_node);
  EXPECT_EQ(command_ok(SubmitCommand::kSrun, {"-N2", "-n3", "--ntasks-per-node=1", "true"}).ntasks_per_node, 1);
  EXPECT_EQ(command_ok(SubmitCommand::kSrun, {"-N2", "-n2", "--ntasks-per-node=2", "true"}).ntasks_per_node, 2);
  EXPECT_EQ(command_ok(S, {"-N1", "-n2", "--ntasks-per-node=1", "--wrap", "x"}).ntasks_per_node, 1);
  // -W and -X are srun's own: the wait and Ctrl-C's path.
  JobRequest w = command_ok(SubmitCommand::kSrun, {"-W", "5", "-X", "true"});
  EXPECT_EQ(w.task_wait_s, 5);
  EXPECT_TRUE(w.disable_status);
}

// Options parsed into the request that nothing in Drover acts on are said,
// not dropped in silence; those it acts on (--ntasks-per-gpu, --prefer) are not.
TEST(Values, ParsedOptionsDroverDoesNotActOnAreWarnedToo) {
  auto r = parse_submission(inputs(S, {"--prefer=h100", "--contiguous", "-O", "--ntasks-per-gpu=2", "--wrap", "x"}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->request.prefer, "h100");
  EXPECT_EQ(r->warnings,
            (std::vector<std::string>{
                "sbatch: warning: --contiguous is accepted for compatibility but has no effect in Drover",
                "sbatch: warning: --overcommit is accepted for compatibility but has no effect in Drover"}));
}

// -B S[:C[:T]] without -n asks for a task per CPU it names on each node, as
// Slurm 22.05 did on the anchor cluster: sbatch and salloc multiply the
// counts given, srun only when all three are; -n or --ntasks-per-node win.
TEST(Values, ExtraNodeInfoImpliesATaskCount) {
  EXPECT_EQ(command_ok(S, {"-B", "2:4:1", "--wrap", "x"}).ntasks, 8);
  EXPECT_EQ(command_ok(S, {"-B", "2", "--wrap", "x"}).ntasks, 2);
  EXPECT_EQ(command_ok(S, {"-B", "*:4:1", "--wrap", "x"}).ntasks, 4);
  EXPECT_EQ(command_ok(S, {"-B", "2:4:1", "-N", "2", "--wrap", "x"}).ntasks, 16);
  EXPECT_EQ(command_ok(S, {"-B", "2:4:1", "-n", "2", "--wrap", "x"}).ntasks, 2);
  EXPECT_FALSE(command_ok(S, {"-B", "2:4:1", "--ntasks-per-node=2", "--wrap", "x"}).ntasks.has_value());
  EXPECT_FALSE(command_ok(S, {"--sockets-per-node=2", "--cores-per-socket=4", "--wrap", "x"}).ntasks.has_value());
  EXPECT_EQ(command_ok(SubmitCommand::kSalloc, {"-B", "2:4"}).ntasks, 8);
  EXPECT_FALSE(command_ok(SubmitCommand::kSrun, {"-B", "2:4", "true"}).ntasks.has_value());
  EXPECT_EQ(command_ok(SubmitCommand::kSrun, {"-B", "1:2:1", "true"}).ntasks, 2);
  // The layout options act on where the job runs now: no warning.
  auto r = parse_submission(inputs(S, {"-B", "2", "--ntasks-per-socket=1", "--ntasks-per-core=1", "--wrap", "x"}));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->warnings.empty()) << r->warnings.front();
}

// ---- precedence: command line > environment > script ------------------------------------------

TEST(Precedence, EnvironmentOverridesScriptAndCommandLineOverridesBoth) {
  Files f{{{"p.sh", "#!/bin/bash\n#SBATCH -J scriptname\n#SBATCH -p training\n#SBATCH -N 2\ntrue\n"}}, {}};
  JobRequest env = sbatch_ok({"p.sh"}, f, {{"SBATCH_PARTITION", "compute"}, {"SBATCH_JOB_NAME", "envname"}});
  EXPECT_EQ(env.partition, "compute");
  EXPECT_EQ(env.job_name, "envname");
  EXPECT_EQ(env.nodes, (NodeRange{2, 2}));  // untouched script value
  EXPECT_EQ(env.origins.at("partition").where, "SBATCH_PARTITION");
  JobRequest cli = sbatch_ok({"-p", "highmem", "p.sh"}, f, {{"SBATCH_PARTITION", "compute"}});
  EXPECT_EQ(cli.partition, "highmem");
  EXPECT_EQ(cli.origins.at("partition").layer, OptionOrigin::Layer::kCommandLine);
}

TEST(Precedence, MemoryOptionsExcludeEachOtherAsInSlurm) {
  Files f{{{"m.sh", "#!/bin/bash\n#SBATCH --mem-per-cpu=1G\ntrue\n"}}, {}};
  // Script --mem-per-cpu with command-line --mem: Slurm's fatal error.
  CliError e = refused(S, {"--mem=2G", "m.sh"}, f);
  EXPECT_EQ(e.text.substr(0, e.text.find('\n')),
            "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.");
  EXPECT_NE(e.text.find("m.sh:2"), std::string::npos);
  // SBATCH_MEM_PER_NODE gives way to the script's --mem-per-cpu.
  JobRequest r = sbatch_ok({"m.sh"}, f, {{"SBATCH_MEM_PER_NODE", "3G"}});
  EXPECT_EQ(r.mem_per_cpu_mb, 1024);
  EXPECT_FALSE(r.mem_per_node_mb);
}

TEST(Precedence, EnvironmentFlagsAndOptionalArguments) {
  EXPECT_TRUE(sbatch_ok({"--wrap", "x"}, {}, {{"SBATCH_REQUEUE", ""}}).requeue.value_or(false));
  EXPECT_TRUE(sbatch_ok({"--wrap", "x"}, {}, {{"SBATCH_REQUEUE", "yes"}}).requeue.value_or(false));
  EXPECT_FALSE(sbatch_ok({"--wrap", "x"}, {}, {{"SBATCH_REQUEUE", "0"}}).requeue.has_value());
  // Slurm passes the value of an optional-argument option on: "yes" is not user|mcs.
  CliError e = refused(S, {"--wrap", "x"}, {}, {{"SBATCH_EXCLUSIVE", "yes"}});
  EXPECT_EQ(e.text.substr(0, e.text.find('\n')), "sbatch: error: Invalid --exclusive specification");
}

// srun inside a batch job inherits the allocation through SLURM_* variables.
TEST(Precedence, SrunReadsTheJobsEnvironment) {
  JobRequest r = command_ok(SubmitCommand::kSrun, {"hostname"},
                            {{"SLURM_JOB_ID", "117"}, {"SLURM_NTASKS", "32"}, {"SLURM_NNODES", "4"},
                             {"SLURM_NTASKS_PER_NODE", "8"}, {"SBATCH_PARTITION", "ignored"}});
  EXPECT_EQ(r.jobid, 117);
  EXPECT_EQ(r.ntasks, 32);
  EXPECT_EQ(r.nodes, (NodeRange{4, 4}));
  EXPECT_EQ(r.ntasks_per_node, 8);
  EXPECT_FALSE(r.partition);
  JobRequest cli = command_ok(SubmitCommand::kSrun, {"-n", "1", "hostname"}, {{"SLURM_NTASKS", "32"}});
  EXPECT_EQ(cli.ntasks, 1);
}

// A real batch job's environment (golden env_batch_2node_a100.txt) feeds
// srun without refusal and gives it the allocation's shape.
TEST(Precedence, SrunInsideARealBatchEnvironment) {
  test::Golden g = test::read_golden("env_batch_2node_a100.txt");
  std::map<std::string, std::string> env;
  std::istringstream lines(g.output);
  for (std::string line; std::getline(lines, line);) {
    auto eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  ASSERT_TRUE(env.count("SLURM_JOB_ID"));
  JobRequest r = command_ok(SubmitCommand::kSrun, {"hostname"}, env);
  EXPECT_EQ(r.jobid, std::stoll(env["SLURM_JOB_ID"]));
  EXPECT_EQ(r.ntasks, std::stoll(env["SLURM_NTASKS"]));
  EXPECT_EQ(r.nodes->min, std::stoll(env["SLURM_NNODES"]));
  EXPECT_EQ(r.mem_per_cpu_mb, std::stoll(env["SLURM_MEM_PER_CPU"]));
}

}  // namespace
}  // namespace drover::cli

namespace drover::cli {
namespace {

// srun's options of Slurm 22.05 that Drover takes: --quit-on-interrupt acts,
// --msg-timeout and --accel-bind are warned about, --x11 is refused (no
// forwarding), not "unrecognized".
TEST(Values, SrunInterruptTimeoutBindingAndX11) {
  auto r = parse_submission(inputs(SubmitCommand::kSrun, {"--quit-on-interrupt", "--msg-timeout=30", "--accel-bind=g",
                                                          "hostname"}));
  ASSERT_TRUE(r.ok()) << r.error().text;
  EXPECT_TRUE(r->request.quit_on_interrupt);
  EXPECT_EQ(r->request.uninterpreted.at("--msg-timeout"), "30");
  EXPECT_EQ(r->request.uninterpreted.at("--accel-bind"), "g");
  EXPECT_EQ(r->warnings.size(), 2u);
  for (auto cmd : {SubmitCommand::kSrun, SubmitCommand::kSalloc}) {
    auto x = parse_submission(inputs(cmd, {"--x11", "xterm"}));
    ASSERT_FALSE(x.ok());
    EXPECT_NE(x.error().text.find("--x11: X11 forwarding is not built in Drover"), std::string::npos) << x.error().text;
  }
  EXPECT_FALSE(parse_submission(inputs(SubmitCommand::kSbatch, {"--quit-on-interrupt", "--wrap", "x"})).ok());
}

}  // namespace
}  // namespace drover::cli
