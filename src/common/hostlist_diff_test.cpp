// Differential test: Drover's host-list expansion and canonical folding
// against ClusterShell (python3 module ClusterShell.NodeSet, Debian package
// `clustershell`) on random expressions from a seeded generator.
//
// All expressions go to one temp file; one python3 process answers them all
// (testdata/clustershell_oracle.py); the test compares. Zero differences are
// required. DROVER_HOSTLIST_SEED and DROVER_HOSTLIST_CASES override the seed
// and the number of expressions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/hostlist.hpp"

namespace drover {
namespace {

constexpr uint64_t kDefaultSeed = 20261129;
constexpr int kDefaultCases = 12000;

uint64_t env_number(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

// Random host-list expressions in the syntax both Slurm and ClusterShell read
// the same way: no digits between two brackets, a digit before "[" only when
// every bound in the bracket has the same width, padded ranges that keep
// their width, no spaces and no ClusterShell operators.
class ExprGenerator {
 public:
  explicit ExprGenerator(uint64_t seed) : rng_(seed) {}

  std::string expression() {
    words_.clear();
    int n = pick(1, 4);
    std::string out;
    for (int i = 0; i < n; ++i) out += (i ? "," : "") + word();
    return out;
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool chance(int percent) { return pick(1, 100) <= percent; }
  template <class T>
  const T& one_of(const std::vector<T>& v) { return v[pick(0, static_cast<int>(v.size()) - 1)]; }

  std::string text() {
    static const std::vector<std::string> kTexts = {
        "gpu", "node", "cn", "r", "rack", "x", "compute-", "a.b", "/dev/nvidia", "n", "gpu-h100-",
        "ib", "_", "s-", "login", "c", "A", "z", "-n", "hgpu", "lgpu", "-", "p2p-", "mig.1g-"};
    return one_of(kTexts);
  }

  std::string number(int value, int width) {
    std::string s = std::to_string(value);
    return s.size() < static_cast<std::size_t>(width) ? std::string(width - s.size(), '0') + s : s;
  }

  // One bracket element; width 0 is unpadded (ranges may then cross widths).
  std::string element(int width) {
    int max = width == 0 ? 120 : std::min(999, static_cast<int>(std::pow(10, width)) - 1);
    int lo = pick(0, std::min(max, 100));
    if (chance(35)) return number(lo, width);
    int hi = std::min(max, lo + pick(1, 12));
    return number(lo, width) + "-" + number(hi, width);
  }

  std::string bracket(bool same_width) {
    int width = chance(50) ? 0 : pick(2, 3);
    last_bracket_padded_ = width != 0;
    std::string out = "[";
    int n = pick(1, 3);
    for (int i = 0; i < n; ++i) {
      if (!same_width && chance(20)) {
        width = chance(50) ? 0 : pick(2, 3);
        last_bracket_padded_ = false;
      }
      out += (i ? "," : "") + element(same_width && width == 0 ? 2 : width);
    }
    return out + "]";
  }

  std::string plain_name() {
    std::string s = text();
    if (chance(80)) s += number(pick(0, 150), chance(50) ? 0 : pick(2, 4));
    if (chance(15)) s += one_of(std::vector<std::string>{"-ib", "b", ".x", "-bmc"});
    return s;
  }

  std::string bracket_word() {
    std::string s = chance(90) ? text() : "";
    bool digit_prefix = chance(10) && !s.empty();
    if (digit_prefix) s += std::to_string(pick(1, 9));
    int groups = chance(60) ? 1 : pick(2, 3);
    for (int g = 0; g < groups; ++g) {
      if (g > 0) s += text();
      s += bracket(g == 0 && digit_prefix);
    }
    // Digits right after a bracket: ClusterShell reads "[1-2]0" as the range
    // 10-20/10, the same names, but only when every bound has one width.
    if (last_bracket_padded_ && chance(20)) s += std::to_string(pick(0, 9));
    if (chance(15)) s += one_of(std::vector<std::string>{"-ib", "b", ".x"});
    return s;
  }

  // Several words of one 2-D pattern with random sub-ranges: sets that are
  // not full products, to exercise multi-dimensional folding.
  std::string nd_subset_word() {
    if (nd_texts_.empty() || chance(30)) nd_texts_ = {text(), text()};
    std::string s = nd_texts_[0] + "[" + element(0) + "]" + nd_texts_[1] + "[" + element(0) + "]";
    return s;
  }

  // Scattered points of a 2-D or 3-D grid written name by name, some
  // dimensions zero-padded: the hard case for the multi-dimensional merge.
  std::string scatter_words() {
    int dims = pick(2, 3), side = pick(2, 6), width = chance(30) ? 2 : 0;
    std::vector<std::string> texts = {text(), text(), text()};
    std::string out;
    for (int n = pick(2, 30); n > 0; --n) {
      std::string name;
      for (int d = 0; d < dims; ++d) name += texts[d] + number(pick(0, side), d == 1 ? width : 0);
      out += (out.empty() ? "" : ",") + name;
    }
    return out;
  }

  std::string word() {
    std::string w;
    int kind = pick(1, 100);
    if (!words_.empty() && kind <= 8) {
      w = one_of(words_);  // duplicate
    } else if (kind <= 30) {
      w = plain_name();
    } else if (kind <= 70) {
      w = bracket_word();
    } else if (kind <= 90) {
      w = nd_subset_word();
    } else {
      w = scatter_words();
    }
    words_.push_back(w);
    return w;
  }

  std::mt19937_64 rng_;
  std::vector<std::string> words_;
  std::vector<std::string> nd_texts_;
  bool last_bracket_padded_ = false;  // the last bracket's bounds all have one (padded) width
};

std::string find_python() {
  const char* from_env = std::getenv("DROVER_PYTHON");
  for (const char* candidate : {from_env, static_cast<const char*>("python3"), "/usr/bin/python3"}) {
    if (!candidate || !*candidate) continue;
    std::string cmd = std::string(candidate) + " -c 'import ClusterShell.NodeSet' >/dev/null 2>&1";
    if (std::system(cmd.c_str()) == 0) return candidate;
  }
  return {};
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

std::set<std::string> as_set(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

// Compares one expression; returns an empty string when Drover agrees.
std::string compare_one(const std::string& expr, const std::string& oracle_line) {
  auto mine = hostlist_expand(expr);
  if (oracle_line.rfind("ERR\t", 0) == 0) {
    return mine ? "ClusterShell rejects it (" + oracle_line.substr(4) + "), Drover accepts it" : "";
  }
  if (!mine) return "Drover rejects it: " + mine.error().message;
  auto tab = oracle_line.find('\t', 3);
  std::string folded = oracle_line.substr(3, tab - 3);
  std::set<std::string> names = as_set(split_commas(oracle_line.substr(tab + 1)));
  if (as_set(*mine) != names) return "expansions differ";
  std::string my_fold = hostlist_compress_sorted(*mine);
  if (my_fold != folded) return "folding differs: Drover \"" + my_fold + "\", ClusterShell \"" + folded + "\"";
  auto again = hostlist_expand(my_fold);
  if (!again || as_set(*again) != names) return "Drover's folded form does not expand back to the same names";
  auto in_order = hostlist_expand(hostlist_compress(*mine));
  if (!in_order || *in_order != *mine) return "hostlist_compress does not expand back to the same sequence";
  return {};
}

TEST(HostlistDifferential, AgreesWithClusterShell) {
  std::string python = find_python();
  if (python.empty()) {
    GTEST_SKIP() << "python3 with ClusterShell (Debian package 'clustershell') not found; "
                    "install it to run the differential test";
  }
  uint64_t seed = env_number("DROVER_HOSTLIST_SEED", kDefaultSeed);
  int cases = static_cast<int>(env_number("DROVER_HOSTLIST_CASES", kDefaultCases));
  std::printf("host-list differential test: seed %llu, %d expressions\n",
              static_cast<unsigned long long>(seed), cases);

  ExprGenerator gen(seed);
  std::vector<std::string> exprs;
  for (int i = 0; i < cases; ++i) exprs.push_back(gen.expression());

  std::string dir = testing::TempDir();
  std::string in_path = dir + "/drover_hostlist_exprs.txt", out_path = dir + "/drover_hostlist_oracle.txt";
  {
    std::ofstream in(in_path);
    for (const auto& e : exprs) in << e << '\n';
  }
  std::string script = std::string(DROVER_SOURCE_DIR) + "/src/common/testdata/clustershell_oracle.py";
  std::string cmd = python + " " + script + " " + in_path + " " + out_path;
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "the ClusterShell oracle failed: " << cmd;

  std::ifstream out(out_path);
  std::vector<std::string> answers;
  for (std::string line; std::getline(out, line);) answers.push_back(line);
  ASSERT_EQ(answers.size(), exprs.size()) << "the oracle answered " << answers.size() << " of " << exprs.size();

  int differences = 0;
  for (std::size_t i = 0; i < exprs.size(); ++i) {
    std::string why = compare_one(exprs[i], answers[i]);
    if (why.empty()) continue;
    if (++differences <= 10) {
      ADD_FAILURE() << "seed " << seed << ", case " << i << ": \"" << exprs[i] << "\": " << why;
    }
  }
  EXPECT_EQ(differences, 0) << "seed " << seed << ": " << differences << " of " << exprs.size()
                            << " expressions differ from ClusterShell";
  std::remove(in_path.c_str());
  std::remove(out_path.c_str());
}

}  // namespace
}  // namespace drover
