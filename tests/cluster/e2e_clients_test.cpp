// End to end: real Slurm clients against a live cluster. snakemake 7's own
// --slurm executor runs a workflow unmodified; submitit's, Nextflow's and the
// Prometheus exporter's exact command lines (../shared/anchors/clients.md)
// give output their parsing rules accept, checked with re-implementations of
// those rules.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/strings.hpp"
#include "harness.hpp"

namespace drover::e2e {
namespace {

using namespace std::chrono_literals;

bool have_program(const std::string& name) {
  for (const auto& dir : split("/usr/local/bin:/usr/bin:/bin", ':')) {
    if (access((dir + "/" + name).c_str(), X_OK) == 0) return true;
  }
  return false;
}

// A three-rule workflow: a -> b -> c, each a cluster job; `all` runs locally.
// With `mpi` set, snakemake 7's job step runs the rule's command itself;
// without it, the job step wraps it in `srun -n1 --cpu-bind=q` (slurm_jobstep.py).
std::string snakefile(bool via_srun) {
  std::string res = via_srun ? "runtime=5, mem_mb=2000" : "runtime=5, mem_mb=2000, mpi=\"none\"";
  std::string out = "localrules: all\n\nrule all:\n    input: \"c.txt\"\n\n";
  out += "rule a:\n    output: \"a.txt\"\n    resources: " + res +
         "\n    shell: \"echo a $SLURM_JOB_ID > {output}\"\n\n";
  out += "rule b:\n    input: \"a.txt\"\n    output: \"b.txt\"\n    resources: " + res +
         "\n    shell: \"cat {input} > {output}; echo b $SLURM_JOB_ID >> {output}\"\n\n";
  out += "rule c:\n    input: \"b.txt\"\n    output: \"c.txt\"\n    resources: " + res +
         "\n    shell: \"cat {input} > {output}; echo c $SLURM_JOB_ID >> {output}\"\n";
  return out;
}

CmdResult run_snakemake(const TestCluster& c, const std::string& dir) {
  return c.run_program("snakemake", {"--slurm", "--jobs", "3", "--snakefile", dir + "/Snakefile", "--directory", dir,
                                     "--max-status-checks-per-second", "10", "--latency-wait", "5", "--nolock"},
                       {}, "", dir);
}

// through_srun: each rule ran as snakemake's srun step inside its job (a `.0` row).
void check_workflow_ran(const TestCluster& c, const std::string& dir, const CmdResult& r, bool through_srun) {
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("3 of 4 steps (75%) done"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("4 of 4 steps (100%) done"), std::string::npos) << r.err;
  auto lines = lines_of(read_file(dir + "/c.txt"));
  ASSERT_EQ(lines.size(), 3u) << read_file(dir + "/c.txt");
  std::set<std::string> ids;
  for (std::size_t i = 0; i < 3; ++i) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(lines[i], m, std::regex(std::string(1, "abc"[i]) + " (\\d+)"))) << lines[i];
    ids.insert(m[1]);
    // Each rule was its own job, recorded as COMPLETED with its batch step (and its srun step).
    auto acct = c.run("sacct", {"-P", "-n", "--format=JobIdRaw,State", "-j", m[1]});
    EXPECT_EQ(acct.out, m[1].str() + "|COMPLETED\n" + m[1].str() + ".batch|COMPLETED\n" +
                            (through_srun ? m[1].str() + ".0|COMPLETED\n" : std::string()));
  }
  EXPECT_EQ(ids.size(), 3u);
}

TEST(Snakemake, SlurmExecutorRunsAThreeRuleWorkflow) {
  if (!have_program("snakemake")) GTEST_SKIP() << "snakemake is not installed (Debian package snakemake)";
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  std::string dir = c.work() + "/wf";
  mkdir(dir.c_str(), 0755);
  std::ofstream(dir + "/Snakefile") << snakefile(false);
  check_workflow_ran(c, dir, run_snakemake(c, dir), false);
}

// The default (non-MPI) job step runs the rule through `srun -n1 --cpu-bind=q`.
TEST(Snakemake, SlurmExecutorThroughSrunInsideJobs) {
  if (!have_program("snakemake")) GTEST_SKIP() << "snakemake is not installed (Debian package snakemake)";
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  std::string dir = c.work() + "/wf";
  mkdir(dir.c_str(), 0755);
  std::ofstream(dir + "/Snakefile") << snakefile(true);
  check_workflow_ran(c, dir, run_snakemake(c, dir), true);
}

}  // namespace
}  // namespace drover::e2e

namespace drover::e2e {
namespace {

// ---- the clients' parsing rules, re-implemented from clients.md ----

// submitit: sacct -o JobID,State,NodeList --parsable2 -j ID; the header names
// the columns, ids with '.' are skipped, "N_[2-4%25]" stands for N_2..N_4.
std::map<std::string, std::map<std::string, std::string>> submitit_sacct(const std::string& out) {
  std::map<std::string, std::map<std::string, std::string>> jobs;
  auto lines = lines_of(out);
  if (lines.size() < 2) return jobs;
  auto names = split(lines[0], '|');
  const std::regex array(R"((\d+)_\[((\d+(-\d+)?,?)+)(%\d+)?\])"), single(R"((\d+)(_(\d+))?)");
  for (std::size_t i = 1; i < lines.size(); ++i) {
    auto values = split(lines[i], '|');
    std::map<std::string, std::string> stats;
    for (std::size_t k = 0; k < names.size() && k < values.size(); ++k) stats[names[k]] = values[k];
    const std::string& id = stats["JobID"];
    if (id.empty() || id.find('.') != std::string::npos) continue;
    std::smatch m;
    if (std::regex_match(id, m, array)) {
      for (const auto& item : split(m[2].str(), ',')) {
        auto dash = item.find('-');
        int64_t lo = std::stoll(item.substr(0, dash)), hi = dash == std::string::npos ? lo : std::stoll(item.substr(dash + 1));
        for (int64_t t = lo; t <= hi; ++t) jobs[m[1].str() + "_" + std::to_string(t)] = stats;
      }
    } else if (std::regex_match(id, m, single)) {
      jobs[id] = stats;
    } else {
      ADD_FAILURE() << "submitit cannot read the job id '" << id << "'";
    }
  }
  return jobs;
}

const std::set<std::string> kSubmititNotDone = {"READY",   "PENDING",    "RUNNING",  "UNKNOWN",
                                                 "REQUEUED", "COMPLETING", "PREEMPTED"};

// Nextflow: `squeue --noheader -o '%i %t' -t all ...`: exactly two columns, a known code.
std::map<std::string, std::string> nextflow_squeue(const std::string& out) {
  static const std::set<std::string> codes = {"PD", "R", "CA", "CF", "CG", "CD", "F", "TO", "NF", "S", "ST", "PR", "BF"};
  std::map<std::string, std::string> jobs;
  for (const auto& line : lines_of(out)) {
    std::istringstream in(line);
    std::vector<std::string> cols;
    for (std::string w; in >> w;) cols.push_back(w);
    EXPECT_EQ(cols.size(), 2u) << "Nextflow refuses the line '" << line << "'";
    if (cols.size() != 2) continue;
    EXPECT_TRUE(codes.count(cols[1])) << "Nextflow does not know the state code in '" << line << "'";
    jobs[cols[0]] = cols[1];
  }
  return jobs;
}

// The exporter's "A/I/O/T" CPU counts.
std::vector<double> exporter_cpus(const std::string& field) {
  auto parts = split(field, '/');
  EXPECT_EQ(parts.size(), 4u) << field;
  std::vector<double> v;
  for (const auto& p : parts) v.push_back(std::stod(p));
  return v;
}

TEST(ClientFixtures, SubmititNextflowAndTheExporterParseWhatTheCommandsPrint) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  // submitit: `sbatch <script>` with its header, id from "job (\d+)".
  std::string script = c.work() + "/submitit.sh";
  std::ofstream(script) << "#!/bin/bash\n"
                           "#SBATCH --error=" << c.work() << "/%j_0_log.err\n"
                           "#SBATCH --exclusive\n#SBATCH --job-name=submitit\n#SBATCH --nodes=1\n"
                           "#SBATCH --open-mode=append\n#SBATCH --output=" << c.work() << "/%j_0_log.out\n"
                           "#SBATCH --partition=compute\n#SBATCH --signal=USR2@90\n#SBATCH --time=5\n"
                           "#SBATCH --wckey=submitit\necho ran\n";
  auto sub = c.run("sbatch", {script});
  ASSERT_EQ(sub.rc, 0) << sub.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(sub.out, m, std::regex(R"(job (\d+))"))) << sub.out;
  std::string done_id = m[1];
  ASSERT_TRUE(c.wait_done(done_id));
  // A held array (pending, compressed) and a running GPU job.
  auto arr = c.run("sbatch", {"--array=0-3%2", "-H", "--wrap", "true"});
  ASSERT_TRUE(std::regex_search(arr.out, m, std::regex(R"(Submitted batch job (\d+))"))) << arr.out;  // Nextflow's rule
  std::string arr_id = m[1];
  int64_t gpu = c.submit({"-p", "gpu", "--gres=gpu:h100:2", "--wrap", "sleep 60"});
  ASSERT_GT(gpu, 0);
  std::string gpu_id = std::to_string(gpu);
  ASSERT_TRUE(c.wait_state(gpu_id, {"RUNNING"}));

  for (const std::string& id : {done_id, arr_id, gpu_id}) {
    auto r = c.run("sacct", {"-o", "JobID,State,NodeList", "--parsable2", "-j", id});
    ASSERT_EQ(r.rc, 0) << r.err;
    auto jobs = submitit_sacct(r.out);
    if (id == done_id) {
      ASSERT_TRUE(jobs.count(id)) << r.out;
      EXPECT_EQ(jobs[id]["State"], "COMPLETED");
      EXPECT_FALSE(kSubmititNotDone.count(jobs[id]["State"]));
    } else if (id == arr_id) {
      ASSERT_EQ(jobs.size(), 4u) << r.out;
      for (int t = 0; t < 4; ++t) EXPECT_EQ(jobs[id + "_" + std::to_string(t)]["State"], "PENDING") << r.out;
    } else {
      EXPECT_EQ(jobs[id]["State"], "RUNNING") << r.out;
      EXPECT_EQ(jobs[id]["NodeList"], "hgpu1") << r.out;
    }
  }

  // Nextflow: squeue --noheader -o '%i %t' -t all [-p QUEUE -u USER]; array tasks as <id>_<index>.
  auto nf = c.run("squeue", {"--noheader", "-o", "%i %t", "-t", "all", "-p", "compute,gpu", "-u", "root"});
  ASSERT_EQ(nf.rc, 0) << nf.err;
  auto nfj = nextflow_squeue(nf.out);
  EXPECT_EQ(nfj[done_id], "CD") << nf.out;
  EXPECT_EQ(nfj[gpu_id], "R") << nf.out;
  EXPECT_EQ(nfj[arr_id + "_[0-3%2]"], "PD") << nf.out;
  // -w of a node the cluster lacks: Slurm 22.05's words, exit 1; of a node it has, its jobs.
  auto bad_node = c.run("squeue", {"-w", "hgpu1,nosuch1"});
  EXPECT_EQ(bad_node.rc, 1);
  EXPECT_EQ(bad_node.err, "squeue: error: Invalid node name nosuch1\n");
  auto on_node = c.run("squeue", {"-h", "-w", "hgpu1", "-o", "%i"});
  EXPECT_EQ(on_node.rc, 0) << on_node.err;
  EXPECT_NE(on_node.out.find(gpu_id), std::string::npos) << on_node.out;
  auto nf2 = c.run("squeue", {"--noheader", "-o", "%i %t", "-t", "all", "--only-job-state"});
  if (nf2.rc == 0) nextflow_squeue(nf2.out);

  // The Prometheus exporter (argv exactly as its exec.Command passes it: "-o %A,%T,%r" is one word).
  auto q = c.run("squeue", {"-a", "-r", "-h", "-o %A,%T,%r", "--states=all"});
  ASSERT_EQ(q.rc, 0) << q.err;
  static const std::set<std::string> states = {"PENDING", "RUNNING", "SUSPENDED", "CANCELLED", "COMPLETING",
                                               "COMPLETED", "CONFIGURING", "FAILED", "TIMEOUT", "PREEMPTED",
                                               "NODE_FAIL"};
  int pending = 0, running = 0;
  for (const auto& line : lines_of(q.out)) {
    auto f = split(line, ',');
    ASSERT_EQ(f.size(), 3u) << line;
    std::string state(trim(f[1]));
    EXPECT_TRUE(states.count(state)) << line;
    pending += state == "PENDING";
    running += state == "RUNNING";
  }
  EXPECT_EQ(pending, 4) << q.out;  // -r: every array element
  EXPECT_EQ(running, 1) << q.out;
  for (const char* fmt : {"-o %A|%a|%T|%C", "-o %A|%u|%T|%C"}) {
    auto r = c.run("squeue", {"-a", "-r", "-h", fmt});
    ASSERT_EQ(r.rc, 0) << r.err;
    for (const auto& line : lines_of(r.out)) EXPECT_EQ(split(line, '|').size(), 4u) << line;
  }
  auto parts = c.run("sinfo", {"-h", "-o%R,%C"});
  ASSERT_EQ(parts.rc, 0) << parts.err;
  for (const auto& line : lines_of(parts.out)) exporter_cpus(split(line, ',').at(1));
  auto ppend = c.run("squeue", {"-a", "-r", "-h", "-o%P", "--states=PENDING"});
  EXPECT_EQ(lines_of(ppend.out), std::vector<std::string>(4, "compute")) << ppend.out;
  auto cpus = c.run("sinfo", {"-h", "-o %C"});
  auto cv = exporter_cpus(std::string(trim(cpus.out)));
  EXPECT_EQ(cv[0], 1);   // the GPU job's one CPU
  EXPECT_EQ(cv[3], 64);  // 4 nodes x 16
  auto nodes = c.run("sinfo", {"-h", "-o %D,%T"});
  int counted = 0;
  for (const auto& line : lines_of(nodes.out)) {
    auto f = split(std::string(trim(line)), ',');
    ASSERT_EQ(f.size(), 2u) << line;
    counted += std::stoi(f[0]);
    EXPECT_TRUE(std::regex_search(f[1], std::regex("^(alloc|comp|down|drain|fail|err|idle|maint|mix|res)"))) << line;
  }
  EXPECT_EQ(counted, 4) << nodes.out;
  auto node = c.run("sinfo", {"-h", "-N", "-O", "NodeList,AllocMem,Memory,CPUsState,StateLong"});
  for (const auto& line : lines_of(node.out)) {
    std::istringstream in(line);
    std::vector<std::string> f;
    for (std::string w; in >> w;) f.push_back(w);
    ASSERT_EQ(f.size(), 5u) << line;
    EXPECT_NO_THROW(std::stod(f[1]));
    EXPECT_NO_THROW(std::stod(f[2]));
    exporter_cpus(f[3]);
  }
  // GPUs: allocated from sacct's AllocGRES of running jobs, total from sinfo "%n %G" (quotes included).
  auto used = c.run("sacct", {"-a", "-X", "--format=Allocgres", "--state=RUNNING", "--noheader", "--parsable2"});
  ASSERT_EQ(used.rc, 0) << used.err;
  double alloc_gpus = 0;
  for (auto line : lines_of(used.out)) {
    line.erase(std::remove(line.begin(), line.end(), '"'), line.end());
    ASSERT_EQ(line.rfind("gpu:", 0), 0u) << line;
    alloc_gpus += std::stod(line.substr(4));
  }
  EXPECT_EQ(alloc_gpus, 2) << used.out;
  auto total = c.run("sinfo", {"-h", "-o \"%n %G\""});
  double total_gpus = 0;
  for (auto line : lines_of(total.out)) {
    line.erase(std::remove(line.begin(), line.end(), '"'), line.end());
    std::istringstream in(line);
    std::string name, gres;
    in >> name >> gres;
    for (const auto& res : split(gres, ',')) {
      if (res.rfind("gpu:", 0) != 0) continue;
      auto fields = split(res, ':');
      ASSERT_GE(fields.size(), 3u) << res;
      total_gpus += std::stod(fields[2].substr(0, fields[2].find('(')));
    }
  }
  EXPECT_EQ(total_gpus, 12) << total.out;
  // sdiag: the exporter reads "Label: number" lines; Last cycle and Mean cycle come twice (main, backfill).
  auto diag = c.run("sdiag", {});
  ASSERT_EQ(diag.rc, 0) << diag.err;
  std::map<std::string, std::vector<double>> seen;
  for (const auto& line : lines_of(diag.out)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string label(trim(line.substr(0, colon)));
    std::string value(trim(line.substr(colon + 1)));
    if (!value.empty() && std::isdigit(static_cast<unsigned char>(value[0]))) seen[label].push_back(std::stod(value));
  }
  for (const char* label : {"Server thread count", "Agent queue size", "DBD Agent queue size",
                            "Total backfilled jobs (since last slurm start)",
                            "Total backfilled jobs (since last stats cycle start)",
                            "Total backfilled heterogeneous job components"}) {
    EXPECT_EQ(seen[label].size(), 1u) << label << "\n" << diag.out;
  }
  EXPECT_EQ(seen["Last cycle"].size(), 2u) << diag.out;
  // Means appear once a pass has run (Slurm's rule); the full pass runs every bf_interval.
  ASSERT_EQ(seen["Total cycles"].size(), 2u) << diag.out;
  std::size_t main_ran = seen["Total cycles"][0] > 0, full_ran = seen["Total cycles"][1] > 0;
  EXPECT_EQ(seen["Mean cycle"].size(), main_ran + full_ran) << diag.out;
  EXPECT_EQ(seen["Depth Mean"].size(), full_ran) << diag.out;
  EXPECT_EQ(main_ran, 1u) << "the submissions ran quick passes\n" << diag.out;
  EXPECT_GE(seen["Jobs submitted"].at(0), 3) << diag.out;
  EXPECT_GT(seen["Server thread count"].at(0), 1) << diag.out;
  // sdiag -r: the counters start again from zero, for operators and admins only.
  if (auto user = ensure_user("droveruser")) {
    auto refused = c.run("sdiag", {"-r"}, user->as());
    EXPECT_EQ(refused.rc, 255);
    EXPECT_EQ(refused.err, "slurm_reset_statistics: Access/permission denied\n");
    EXPECT_EQ(refused.out, "");
  }
  auto reset = c.run("sdiag", {"-r"});
  EXPECT_EQ(reset.rc, 0) << reset.err;
  EXPECT_EQ(reset.out, "Reset scheduling statistics\n");
  EXPECT_NE(c.run("sdiag", {}).out.find("\nJobs submitted: 0\n"), std::string::npos);

  // submitit's cancel: scancel <id>.
  EXPECT_EQ(c.run("scancel", {gpu_id}).rc, 0);
  EXPECT_TRUE(c.wait_done(gpu_id));
}


// submitit's timeout path (clients.md 2.1): --signal=USR2@SECS reaches the
// task its srun runs, which requeues its own job with `scontrol requeue`
// (exit 0 or submitit raises); the job comes back with SLURM_RESTART_COUNT
// and completes; submitit's sacct reading counts REQUEUED and PENDING as not
// done, and sacct -D keeps the first run.
TEST(ClientFixtures, SubmititRequeuesItselfOnItsWarningSignal) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  const std::string log = c.work() + "/%j_0_log.out";
  // The handler ignores the SIGTERM the requeue sends its step, which could
  // otherwise come before scontrol has returned and its rc been written.
  std::ofstream(c.work() + "/submitit.sh")
      << "#!/bin/bash\n#SBATCH --job-name=submitit\n#SBATCH --nodes=1\n#SBATCH --open-mode=append\n"
         "#SBATCH --output=" << log << "\n#SBATCH --partition=compute\n#SBATCH --signal=USR2@25\n"
         "#SBATCH --time=0:0:30\n"
         "srun --unbuffered --cpu-bind none bash -c '"
         "if [ -n \"$SLURM_RESTART_COUNT\" ]; then echo resumed $SLURM_RESTART_COUNT; exit 0; fi; "
         "trap \"trap \\\"\\\" TERM; echo got USR2; scontrol requeue \\$SLURM_JOB_ID; echo requeue rc=\\$?; exit 0\" USR2; "
         "echo started; while :; do sleep 0.1; done'\n";
  auto sub = c.run("sbatch", {c.work() + "/submitit.sh"});
  std::smatch m;
  ASSERT_TRUE(std::regex_search(sub.out, m, std::regex(R"(job (\d+))"))) << sub.out << sub.err;
  const std::string id = m[1];
  auto state = [&] {
    auto jobs = submitit_sacct(c.run("sacct", {"-o", "JobID,State,NodeList", "--parsable2", "-j", id}).out);
    return jobs.count(id) ? jobs[id]["State"] : std::string("(none)");
  };
  ASSERT_TRUE(eventually([&] { return c.run("scontrol", {"show", "job", id}).out.find("Restarts=1") != std::string::npos; },
                         20s));
  EXPECT_TRUE(kSubmititNotDone.count(state())) << state();
  ASSERT_TRUE(c.wait_done(id, 30s));
  EXPECT_EQ(state(), "COMPLETED");
  const std::string out = read_file(c.work() + "/" + id + "_0_log.out");
  // (bash may say "User defined signal 2" of its sleep before or after the trap's line)
  EXPECT_LT(out.find("started\n"), out.find("got USR2\n")) << out;
  EXPECT_NE(out.find("got USR2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\nrequeue rc=0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("resumed 1\n"), std::string::npos) << out;
  EXPECT_EQ(c.run("sacct", {"-D", "-X", "-n", "-P", "-j", id, "-o", "State"}).out, "REQUEUED\nCOMPLETED\n");
}

// Open OnDemand runs each command with SLURM_CONF=<file> in its environment
// (sbatch --parsable with the script on stdin, then squeue): with no
// DROVER_CONF, the commands find the cluster through SLURM_CONF as Slurm's
// do; DROVER_CONF, where set, wins.
TEST(ClientFixtures, CommandsFindTheClusterThroughSlurmConf) {
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  const std::vector<std::string> env = {"-u", "DROVER_CONF", "SLURM_CONF=" + c.conf()};
  auto with_env = [&](std::vector<std::string> args) {
    args.insert(args.begin(), env.begin(), env.end());
    return args;
  };
  auto sub = c.run_program("/usr/bin/env", with_env({c.bin() + "/sbatch", "-H", "-J", "ood", "--parsable"}), {},
                           "#!/bin/bash\ntrue\n");
  ASSERT_EQ(sub.rc, 0) << sub.err;
  const std::string id = std::string(trim(sub.out.substr(0, sub.out.find(';'))));
  auto q = c.run_program("/usr/bin/env", with_env({c.bin() + "/squeue", "-h", "-j", id, "-o", "%j %t %r"}));
  EXPECT_EQ(q.out, "ood PD JobHeldUser\n") << q.err;
  // Neither set: the default path, named in the error with where else to look
  // (on a host with no cluster installed there).
  if (::access("/etc/drover/slurm.conf", F_OK) != 0) {
    auto none = c.run_program("/usr/bin/env", {"-u", "DROVER_CONF", "-u", "SLURM_CONF", c.bin() + "/squeue"});
    EXPECT_NE(none.rc, 0);
    EXPECT_NE(none.err.find("cannot read /etc/drover/slurm.conf"), std::string::npos) << none.err;
    EXPECT_NE(none.err.find("DROVER_CONF, SLURM_CONF"), std::string::npos) << none.err;
  }
  // Both set: DROVER_CONF (the harness's) wins over a SLURM_CONF that points elsewhere.
  auto both = c.run_program("/usr/bin/env", {"SLURM_CONF=/nonexistent/slurm.conf", c.bin() + "/squeue", "-h", "-j", id,
                                             "-o", "%j"});
  EXPECT_EQ(both.out, "ood\n") << both.err;
  EXPECT_EQ(c.run("scancel", {id}).rc, 0);
}

// squeue/sinfo/sacct --json on a live cluster: Slurm 22.05's documents (the
// JSON exporters and dashboards read), with the cluster's own jobs and nodes;
// squeue's and sinfo's filters are ignored, as Slurm 22.05 ignores them.
TEST(ClientFixtures, JsonDocumentsDescribeTheLiveCluster) {
  using Json = nlohmann::json;
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  int64_t failed = c.submit({"-p", "compute", "--wrap", "exit 3"});
  ASSERT_GT(failed, 0);
  ASSERT_TRUE(c.wait_done(std::to_string(failed)));
  int64_t gpu = c.submit({"-p", "gpu", "--gres=gpu:h100:2", "-c", "4", "--wrap", "sleep 60"});
  ASSERT_GT(gpu, 0);
  ASSERT_TRUE(c.wait_state(std::to_string(gpu), {"RUNNING"}));
  int64_t arr = c.submit({"--array=0-3%2", "-H", "-t", "5", "--wrap", "true"});
  ASSERT_GT(arr, 0);

  auto q = c.run("squeue", {"--json", "-u", "nobody-at-all", "-o", "%i"});
  ASSERT_EQ(q.rc, 0) << q.err;
  Json doc = Json::parse(q.out);
  EXPECT_EQ(doc["meta"]["plugin"]["type"], "openapi/v0.0.38");
  EXPECT_TRUE(doc["errors"].empty());
  std::map<int64_t, Json> jobs;
  for (const auto& j : doc["jobs"]) jobs[j["job_id"].get<int64_t>()] = j;
  ASSERT_TRUE(jobs.count(gpu) && jobs.count(failed) && jobs.count(arr)) << q.out;
  const Json& g = jobs[gpu];
  EXPECT_EQ(g["job_state"], "RUNNING");
  EXPECT_EQ(g["nodes"], "hgpu1");
  EXPECT_EQ(g["partition"], "gpu");
  EXPECT_EQ(g["cpus"], 4);
  ASSERT_EQ(g["gres_detail"].size(), 1u) << g.dump();
  EXPECT_EQ(g["gres_detail"][0].get<std::string>().rfind("gpu:h100:2(IDX:", 0), 0u) << g.dump();
  EXPECT_EQ(g["job_resources"]["allocated_hosts"], 1);
  EXPECT_EQ(g["job_resources"]["allocated_nodes"][0]["nodename"], "hgpu1");
  EXPECT_NE(g["tres_alloc_str"].get<std::string>().find("gres/gpu=2"), std::string::npos) << g.dump();
  const Json& f = jobs[failed];
  EXPECT_EQ(f["job_state"], "FAILED");
  EXPECT_EQ(f["exit_code"], 3 << 8);
  const Json& a = jobs[arr];
  EXPECT_EQ(a["job_state"], "PENDING");
  EXPECT_EQ(a["array_task_string"], "0-3%2");
  EXPECT_EQ(a["state_reason"], "JobHeldUser");
  EXPECT_EQ(a["priority"], 0);
  EXPECT_FALSE(a.contains("job_resources"));

  auto si = c.run("sinfo", {"--json", "-p", "compute"});
  ASSERT_EQ(si.rc, 0) << si.err;
  Json nodes = Json::parse(si.out)["nodes"];
  ASSERT_EQ(nodes.size(), 4u) << si.out;  // every node, the -p filter ignored
  for (const auto& n : nodes) {
    if (n["name"] != "hgpu1") continue;
    EXPECT_EQ(n["state"], "mixed");
    EXPECT_EQ(n["alloc_cpus"], 4);
    EXPECT_EQ(n["gres"], "gpu:h100:8");
    EXPECT_EQ(n["gres_used"].get<std::string>().rfind("gpu:h100:2(IDX:", 0), 0u) << n.dump();
  }

  auto sa = c.run("sacct", {"--json", "-j", std::to_string(failed)});
  ASSERT_EQ(sa.rc, 0) << sa.err;
  Json acct = Json::parse(sa.out)["jobs"];
  ASSERT_EQ(acct.size(), 1u) << sa.out;
  EXPECT_EQ(acct[0]["state"]["current"], "FAILED");
  EXPECT_EQ(acct[0]["exit_code"], (Json{{"status", "FAILED"}, {"return_code", 3}}));
  ASSERT_EQ(acct[0]["steps"].size(), 1u) << sa.out;
  EXPECT_EQ(acct[0]["steps"][0]["step"]["id"], "batch");

  auto yaml = c.run("squeue", {"--yaml"});
  EXPECT_EQ(yaml.rc, 1);
  EXPECT_NE(yaml.err.find("--yaml is not built"), std::string::npos) << yaml.err;
  c.run("scancel", {std::to_string(gpu), std::to_string(arr)});
}

}  // namespace
}  // namespace drover::e2e
