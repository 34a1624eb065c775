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
#include <set>

#include "common/strings.hpp"
#include "harness.hpp"

namespace drover::e2e {
namespace {

using namespace std::chrono_literals;

#define REQUIRE_CLUSTER(c) ASSERT_TRUE((c).error().empty()) << (c).error()

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  for (auto& l : split(text, '\n')) {
    if (!l.empty()) out.push_back(l);
  }
  return out;
}

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

void check_workflow_ran(const TestCluster& c, const std::string& dir, const CmdResult& r) {
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
    // Each rule was its own job, recorded as COMPLETED with its batch step.
    auto acct = c.run("sacct", {"-P", "-n", "--format=JobIdRaw,State", "-j", m[1]});
    EXPECT_EQ(acct.out, m[1].str() + "|COMPLETED\n" + m[1].str() + ".batch|COMPLETED\n");
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
  check_workflow_ran(c, dir, run_snakemake(c, dir));
}

// The default (non-MPI) job step runs the rule through `srun -n1 --cpu-bind=q`.
TEST(Snakemake, SlurmExecutorThroughSrunInsideJobs) {
  if (!have_program("snakemake")) GTEST_SKIP() << "snakemake is not installed (Debian package snakemake)";
  TestCluster c(small_cluster());
  REQUIRE_CLUSTER(c);
  auto srun = c.run("srun", {"--version"});
  if (srun.rc != 0) GTEST_SKIP() << "srun is not built in this tree (job steps arrive on the steps branch): " << srun.err;
  std::string dir = c.work() + "/wf";
  mkdir(dir.c_str(), 0755);
  std::ofstream(dir + "/Snakefile") << snakefile(true);
  check_workflow_ran(c, dir, run_snakemake(c, dir));
}

}  // namespace
}  // namespace drover::e2e
