// Golden tests of `drover config check` as an admin runs it: the built
// binary, run in each case's directory with `--config slurm.conf` (so every
// path in the output is relative and the test does not depend on where the
// tree lives), must print exactly the expected text and exit with exactly the
// expected status. Expected files hold the output followed by "[exit N]".
//
// Cases: tests/configs/broken/<case>/ (one mistake each; the first lines of
// its slurm.conf say which, "# expect: <code>"), the seed's own configuration
// (examples/seed, tests/configs/seed_expected.txt) and the demo cluster
// (examples/demo, tests/configs/demo_expected.txt).
//
// DROVER_UPDATE_GOLDEN=1 rewrites the expected files from the current output;
// read every changed file before committing it.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kSource = DROVER_SOURCE_DIR;
const fs::path kDrover = fs::path(DROVER_BINARY_DIR) / "bin" / "drover";
const fs::path kBroken = kSource / "tests" / "configs" / "broken";

struct GoldenCase {
  std::string name;
  fs::path dir;       // working directory of the run
  fs::path expected;  // the golden file
};

void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.name; }

std::vector<GoldenCase> golden_cases() {
  std::vector<GoldenCase> out;
  std::vector<fs::path> dirs;
  if (fs::is_directory(kBroken)) {
    for (const auto& e : fs::directory_iterator(kBroken)) {
      if (e.is_directory()) dirs.push_back(e.path());
    }
  }
  std::sort(dirs.begin(), dirs.end());
  for (const auto& d : dirs) out.push_back({d.filename().string(), d, d / "expected.txt"});
  out.push_back({"seed", kSource / "examples" / "seed", kSource / "tests" / "configs" / "seed_expected.txt"});
  out.push_back({"demo", kSource / "examples" / "demo", kSource / "tests" / "configs" / "demo_expected.txt"});
  return out;
}

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs the check in `dir` and returns stdout and stderr as printed, then "[exit N]".
std::string run_check(const fs::path& dir) {
  const std::string cmd = "cd " + quote(dir.string()) + " && " + quote(kDrover.string()) +
                          " config check --config slurm.conf 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return "popen failed";
  std::string out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  const int status = ::pclose(pipe);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return out + "[exit " + std::to_string(code) + "]\n";
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool updating() {
  const char* v = std::getenv("DROVER_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

// "# expect: gres-count-mismatch" from a broken case's slurm.conf.
std::string expected_code(const fs::path& dir) {
  std::ifstream in(dir / "slurm.conf");
  std::string line;
  const std::string tag = "# expect: ";
  while (std::getline(in, line)) {
    if (line.rfind(tag, 0) == 0) return line.substr(tag.size());
  }
  return {};
}

class ConfigCheckGolden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(ConfigCheckGolden, PrintsExactlyTheExpectedFindings) {
  const GoldenCase& c = GetParam();
  ASSERT_TRUE(fs::exists(kDrover)) << "build the drover binary first: " << kDrover;
  ASSERT_TRUE(fs::exists(c.dir / "slurm.conf")) << c.dir;
  const std::string got = run_check(c.dir);
  if (updating()) {
    std::ofstream(c.expected, std::ios::binary) << got;
    GTEST_SKIP() << "rewrote " << c.expected << "; read it before committing";
  }
  ASSERT_TRUE(fs::exists(c.expected)) << "no golden file " << c.expected << " (DROVER_UPDATE_GOLDEN=1 writes it)";
  EXPECT_EQ(got, read_file(c.expected)) << "in " << c.dir;
}

INSTANTIATE_TEST_SUITE_P(Corpus, ConfigCheckGolden, ::testing::ValuesIn(golden_cases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& info) {
                           std::string name;
                           for (char ch : info.param.name) name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
                           return name;
                         });

// The corpus itself: enough cases, each a broken config whose golden output
// reports the mistake the case was written for and fails the check.
TEST(ConfigCheckCorpus, EachBrokenCaseReportsItsOwnMistake) {
  std::size_t cases = 0;
  for (const auto& c : golden_cases()) {
    if (c.dir.parent_path() != kBroken) continue;
    ++cases;
    SCOPED_TRACE(c.name);
    const std::string code = expected_code(c.dir);
    ASSERT_FALSE(code.empty()) << "slurm.conf lacks a '# expect: <code>' line";
    const std::string golden = read_file(c.expected);
    EXPECT_NE(golden.find("[" + code + "]"), std::string::npos) << "the golden output never reports " << code;
    EXPECT_TRUE(golden.find("[exit 1]") != std::string::npos || golden.find("[exit 2]") != std::string::npos)
        << "a broken config must not pass the check";
  }
  EXPECT_GE(cases, 30u);
}

}  // namespace
