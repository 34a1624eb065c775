// sprio and sshare against real Slurm 22.05 output (testdata/slurm-22.05 and
// testdata/oracle), and the Prometheus exporter's and snakemake's sshare use.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cli/cli_test_support.hpp"
#include "cli/sprio_output.hpp"
#include "cli/sshare_output.hpp"
#include "common/strings.hpp"

namespace drover::cli {
namespace {

PriorityView prio(int64_t id, const char* part, int64_t total, int64_t js, int64_t qos,
                  std::vector<std::pair<std::string, int64_t>> tres) {
  PriorityView p;
  p.job_id = id;
  p.partition = part;
  p.user = "alice";
  p.priority = total;
  p.fairshare = 3333;
  p.jobsize = js;
  p.partition_factor = 1000;
  p.qos_factor = qos;
  p.tres = std::move(tres);
  return p;
}

std::vector<PriorityView> anchor_priorities() {
  return {prio(108, "training", 7641, 56, 2000, {{"cpu", 2}, {"gres/gpu", 1250}}),
          prio(109, "training", 7641, 56, 2000, {{"cpu", 2}, {"gres/gpu", 1250}}),
          prio(120, "compute", 6393, 56, 2000, {{"cpu", 4}}),
          prio(121, "interactive", 6390, 56, 2000, {{"cpu", 1}}),
          prio(122, "training", 14547, 56, 10000, {{"cpu", 2}, {"gres/gpu", 156}}),
          prio(126, "compute", 6633, 281, 2000, {{"cpu", 20}})};
}

PriorityWeights anchor_weights() {
  PriorityWeights w;
  w.age = 1000;
  w.fairshare = 10000;
  w.jobsize = 1000;
  w.partition = 1000;
  w.qos = 10000;
  w.tres = "CPU=1000,GRES/gpu=5000";
  return w;
}

std::string sprio(const std::string& golden_command, const std::vector<PriorityView>& jobs, const PriorityWeights& w) {
  auto opts = parse_sprio_options(test::golden_args(golden_command), {});
  EXPECT_TRUE(opts.ok());
  return opts.ok() ? render_sprio(*opts, jobs, w).out : "";
}

TEST(Sprio, DefaultAndLongMatchGoldens) {
  for (const char* name : {"sprio.txt", "sprio_l.txt"}) {
    test::Golden g = test::read_golden(name);
    // Shuffled input: sprio lists by job id.
    auto jobs = anchor_priorities();
    std::swap(jobs[0], jobs[4]);
    EXPECT_EQ(sprio(g.command, jobs, anchor_weights()), g.output) << name;
  }
}

// Job 8 of the private Slurm instance: normalized factors, weights, -o.
TEST(Sprio, NormalizedWeightsAndFormatMatchRealSlurm) {
  PriorityView p;
  p.job_id = 8;
  p.partition = "compute";
  p.user = "root";
  p.priority = 1300;
  p.jobsize = 281;
  p.partition_factor = 1000;
  p.tres = {{"cpu", 20}};
  p.norm_priority = 0.00000030275291;  // as the controller reported it
  p.norm_jobsize = 0.2807826;
  p.norm_partition = 1.0;
  p.norm_tres = {{"cpu", 0.02}};
  PriorityWeights w;
  w.age = 1000;
  w.fairshare = 10000;
  w.jobsize = 1000;
  w.partition = 1000;
  w.qos = 10000;
  w.tres = "CPU=1000";
  std::string dir = std::string(DROVER_SOURCE_DIR) + "/src/cli/testdata/oracle";
  setenv("DROVER_GOLDEN_DIR", dir.c_str(), 1);
  for (const char* name : {"sprio_n.txt", "sprio_n_l.txt", "sprio_w.txt", "sprio_o.txt"}) {
    test::Golden g = test::read_golden(name);
    EXPECT_EQ(sprio(g.command, {p}, w), g.output) << name;
  }
  unsetenv("DROVER_GOLDEN_DIR");
}

// As Slurm 22.05's sprio on the anchor cluster: -u adds the USER column; on the weights line a normalized
// factor shows its weight; an unknown letter is "Invalid job format specification" and prints nothing.
TEST(Sprio, UserColumnWeightsOfNormalizedFactorsAndUnknownLetters) {
  auto jobs = anchor_priorities();
  std::string with_user = sprio("sprio -u root", jobs, anchor_weights());
  EXPECT_EQ(with_user.rfind("          JOBID PARTITION     USER   PRIORITY", 0), 0u) << with_user;
  PriorityWeights w = anchor_weights();
  std::string weights = sprio("sprio -w -o \"%.15i %.10a %.10f %.10Y\"", jobs, w);
  EXPECT_EQ(weights.substr(weights.find('\n') + 1),
            fmt::format("        Weights {:>10} {:>10}           \n", w.age, w.fairshare));
  SprioOptions o = *parse_sprio_options({"-o", "%i %o|"}, {});
  CommandOutput out = render_sprio(o, jobs, anchor_weights());
  EXPECT_EQ(out.err, "sprio: error: Invalid job format specification: o\n");
  EXPECT_EQ(out.out.substr(0, out.out.find('\n')), "JOBID ");
}

// Nothing matched: Slurm 22.05's sprio said so for -j, and printed only its
// header for -u (anchor cluster, both with nothing competing).
TEST(Sprio, NothingMatchedSaysSoOnlyForJobIds) {
  auto jobs = anchor_priorities();
  EXPECT_EQ(sprio("sprio -j 99999", jobs, anchor_weights()), "Unable to find jobs matching user/id(s) specified\n");
  EXPECT_EQ(sprio("sprio -u bob -o \"%i %u %Y\"", jobs, anchor_weights()), "JOBID USER PRIORITY\n");
  EXPECT_EQ(sprio("sprio -u bob -h", jobs, anchor_weights()), "");
}

ShareView share(int depth, const char* account, const char* user, std::optional<int64_t> raw, double norm,
                int64_t usage, double eff, std::optional<double> fs) {
  ShareView s;
  s.depth = depth;
  s.account = account;
  s.user = user;
  s.raw_shares = raw;
  s.norm_shares = norm;
  s.raw_usage = usage;
  s.effective_usage = eff;
  s.fairshare = fs;
  return s;
}

std::vector<ShareView> anchor_shares() {
  return {share(0, "root", "", std::nullopt, 0.0, 18239, 1.0, std::nullopt),
          share(1, "root", "root", 1, 0.5, 0, 0.0, 1.0),
          share(1, "research", "", 1, 0.5, 18239, 1.0, std::nullopt),
          share(2, "research", "alice", 1, 0.5, 18239, 1.0, 0.333333),
          share(2, "research", "root", 1, 0.5, 0, 0.0, 0.666667)};
}

CommandOutput sshare(const std::vector<std::string>& args, const std::string& caller) {
  auto opts = parse_sshare_options(args, {});
  EXPECT_TRUE(opts.ok());
  return opts.ok() ? render_sshare(*opts, anchor_shares(), caller) : CommandOutput{};
}

TEST(Sshare, AllMatchesGolden) {
  test::Golden g = test::read_golden("sshare.txt");
  EXPECT_EQ(sshare(test::golden_args(g.command), "alice").out, g.output);
}

TEST(Sshare, WithoutAllShowsOnlyTheCallersUserRows) {
  std::string out = sshare({"-n", "-P", "-o", "user"}, "alice").out;
  EXPECT_EQ(out, "\n\nalice\n");  // root and research account rows, then alice
  EXPECT_EQ(sshare({"-h", "-P", "-o", "user"}, "alice").out, out);  // -h as -n, as Slurm 22.05's sshare takes it
}

// Prometheus exporter sshare.go: `sshare -n -P -o account,fairshare`, split on '|'.
TEST(Sshare, PrometheusExporterParsesAccountAndFairshare) {
  std::string out = sshare({"-n", "-P", "-o", "account,fairshare"}, "root").out;
  std::vector<std::string> lines = split(std::string(trim(out)), '\n');
  ASSERT_EQ(lines.size(), 4u);
  for (const auto& l : lines) EXPECT_EQ(split(l, '|').size(), 2u) << l;
  EXPECT_EQ(lines[1], " root|1.000000");
}

// snakemake accounts.py: `sshare -U --format Account%256 --noheader`, each line stripped.
TEST(Sshare, SnakemakeReadsTheCallersAccounts) {
  std::string out = sshare({"-U", "--format", "Account%256", "--noheader"}, "alice").out;
  std::vector<std::string> lines = split(std::string(trim(out)), '\n');
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(std::string(trim(lines[0])), "research");
  EXPECT_EQ(out.size(), 256u + 2u);  // 256 columns, the separating space, the newline
  // Not indented as in the tree (Slurm 22.05's `sshare -U`: "research                  alice ").
  EXPECT_EQ(sshare({"-U", "-n", "-o", "Account,User"}, "alice").out.substr(0, 21), "research             ");
  // -A's account is the top of the tree shown: flush left, its users one in (as Slurm's `sshare -A research`).
  std::string a = sshare({"-A", "research", "-n", "-o", "Account,User"}, "alice").out;
  EXPECT_EQ(a.substr(0, 9), "research ") << a;
  EXPECT_NE(a.find("\n research "), std::string::npos) << a;
}

}  // namespace
}  // namespace drover::cli

namespace drover::cli {
namespace {

// Column headers and widths of every sshare field, against the private
// instance (no associations, so header lines only).
TEST(Sshare, LongAndAllFieldHeadersMatchRealSlurm) {
  std::string dir = std::string(DROVER_SOURCE_DIR) + "/src/cli/testdata/oracle";
  setenv("DROVER_GOLDEN_DIR", dir.c_str(), 1);
  for (const char* name : {"sshare_l_empty.txt", "sshare_all_fields_empty.txt"}) {
    test::Golden g = test::read_golden(name);
    auto opts = parse_sshare_options(test::golden_args(g.command), {});
    ASSERT_TRUE(opts.ok());
    EXPECT_EQ(render_sshare(*opts, {}, "root").out, g.output) << name;
  }
  unsetenv("DROVER_GOLDEN_DIR");
}

}  // namespace
}  // namespace drover::cli
