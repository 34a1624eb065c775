// Host lists. Expected values come from the reference tools: real Slurm
// 22.05's `scontrol show hostnames|hostlist|hostlistsorted` and ClusterShell
// 1.9's `nodeset -f`, run on the same inputs (see also the differential
// tests: hostlist_diff_test.cpp, testdata/compare_with_slurm.py).
#include "common/hostlist.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace drover {
namespace {

using Names = std::vector<std::string>;

std::string joined(const Names& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : " ") + s;
  return out;
}

struct ExpandCase {
  const char* expr;
  const char* names;  // space-separated, in order
};

TEST(Hostlist, ExpandsInSlurmsOrder) {
  const ExpandCase cases[] = {
      {"gpu[01-03]", "gpu01 gpu02 gpu03"},
      {"a[1-3,5],b[08-10]", "a1 a2 a3 a5 b08 b09 b10"},
      {"rack[1-2]-n[01-02]", "rack1-n01 rack1-n02 rack2-n01 rack2-n02"},
      {"/dev/nvidia[0-3]", "/dev/nvidia0 /dev/nvidia1 /dev/nvidia2 /dev/nvidia3"},
      {"a[9-11]", "a9 a10 a11"},
      {"a[01-3]", "a01 a02 a03"},           // the width of the first number rules
      {"a[1-03]", "a1 a2 a3"},
      {"a[09-100]", "a09 a10" /* ... */},  // checked by count below
      {"a[3,1-2]", "a3 a1 a2"},
      {"a[1-2,2-3]", "a1 a2 a2 a3"},        // duplicates kept
      {"x,x,a2", "x x a2"},
      {"a,,b", "a b"},                      // empty items skipped, as Slurm
      {"a b\tc", "a b c"},                  // white space separates too
      {"[1-2]", "1 2"},
      {"a1[2-3]", "a12 a13"},
      {"a[1-2][3-4]", "a13 a14 a23 a24"},
      {"n[1-2]-ib", "n1-ib n2-ib"},          // Drover extension: text after the last bracket
      {"x[1-2]y[3-4]z[5-6]", "x1y3z5 x1y3z6 x2y3z5 x2y3z6 x1y4z5 x1y4z6 x2y4z5 x2y4z6"},
      {"a[1,3]b[2,1]c[1-2]", "a1b2c1 a1b2c2 a3b2c1 a3b2c2 a1b1c1 a1b1c2 a3b1c1 a3b1c2"},
      {"", ""},
  };
  for (const auto& c : cases) {
    auto r = hostlist_expand(c.expr);
    ASSERT_TRUE(r.ok()) << c.expr << ": " << r.error().message;
    if (std::string(c.expr) == "a[09-100]") {
      ASSERT_EQ(r->size(), 92u);
      EXPECT_EQ(r->front(), "a09");
      EXPECT_EQ(r->back(), "a100");
      continue;
    }
    EXPECT_EQ(joined(*r), c.names) << c.expr;
  }
}

struct ErrorCase {
  const char* expr;
  const char* message;
};

TEST(Hostlist, ErrorsNameTheBadTextAndWhatWasExpected) {
  const ErrorCase cases[] = {
      {"a[5-3]", "bad range \"5-3\" in \"a[5-3]\": the end is below the start (write the lower number first)"},
      {"a[1-3", "unbalanced brackets in \"a[1-3\": \"[\" is never closed (expected \"]\")"},
      {"a]", "unbalanced brackets in \"a]\": \"]\" without a \"[\" before it"},
      {"a[1-2]]", "unbalanced brackets in \"a[1-2]]\": \"]\" without a \"[\" before it"},
      {"a[1[2]]", "unbalanced brackets in \"a[1[2]]\": \"[\" inside another bracket"},
      {"a[]", "empty brackets in \"a[]\": expected numbers or ranges such as [1-4,7]"},
      {"a[1,,2]", "empty range element in \"a[1,,2]\": expected a number or a range lo-hi between the commas"},
      {"a[x]", "bad range \"x\" in \"a[x]\": expected a number or a range lo-hi such as 1-4"},
      {"a[1-]", "bad range \"1-\" in \"a[1-]\": expected a number or a range lo-hi such as 1-4"},
      {"a[-1]", "bad range \"-1\" in \"a[-1]\": expected a number or a range lo-hi such as 1-4"},
      {"a[1-2-3]", "bad range \"1-2-3\" in \"a[1-2-3]\": expected a number or a range lo-hi such as 1-4"},
      {"a[12345678901234567890]",
       "bad range \"12345678901234567890\" in \"a[12345678901234567890]\": number \"12345678901234567890\" "
       "is too large (at most 19 digits)"},
  };
  for (const auto& c : cases) {
    auto r = hostlist_expand(c.expr);
    ASSERT_FALSE(r.ok()) << c.expr;
    EXPECT_EQ(r.error().message, c.message) << c.expr;
  }
}

TEST(Hostlist, RefusesMoreHostsThanTheLimit) {
  auto r = hostlist_expand("a[1-1000],b[1-10]", 1005);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "host list \"a[1-1000],b[1-10]\" names more than 1005 hosts (the limit)");
  EXPECT_TRUE(hostlist_expand("a[1-1000],b[1-5]", 1005).ok());
  auto huge = hostlist_expand("a[0-9999999999999999999]");  // counts before expanding
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.error().message.find("names more than 4194304 hosts"), std::string::npos);
}

struct CompressCase {
  const char* expr;
  const char* in_order;  // scontrol show hostlist
  const char* sorted;    // scontrol show hostlistsorted
};

// Outputs of real Slurm 22.05 for these inputs.
TEST(Hostlist, RangedStringsAsSlurm) {
  const CompressCase cases[] = {
      {"gpu03,gpu01,gpu02,gpu1", "gpu[03,01-02,1]", "gpu[1,01-03]"},
      {"a[1-3,5],b[08-10]", "a[1-3,5],b[08-10]", "a[1-3,5],b[08-10]"},
      {"rack[1-2]-n[01-04]", "rack1-n[01-04],rack2-n[01-04]", "rack1-n[01-04],rack2-n[01-04]"},
      {"x,x,a2,a1,a1", "x,x,a[2,1,1]", "a[1,1-2],x,x"},
      {"gpu[01-03],gpu[02-05]", "gpu[01-03,02-05]", "gpu[01-02,02-03,03-05]"},
      {"a1,b1,a2", "a1,b1,a2", "a[1-2],b1"},
      {"a9,a010", "a[9,010]", "a[9,010]"},
      {"a01,a2", "a[01,2]", "a[2,01]"},
      {"a99,a100", "a[99-100]", "a[99-100]"},
      {"a3,a2", "a[3,2]", "a[2-3]"},
      {"r2n1,r1n2,r10n1", "r2n1,r1n2,r10n1", "r1n2,r2n1,r10n1"},
      {"b1,aa1", "b1,aa1", "aa1,b1"},
      {"a,a1", "a,a1", "a,a1"},
      {"a1,a", "a1,a", "a,a1"},
      {"A1,a1", "A1,a1", "A1,a1"},
      {"a-1,a1", "a-1,a1", "a1,a-1"},
      {"a01b1,a1b1", "a01b1,a1b1", "a01b1,a1b1"},
      {"a09,a9,a10", "a[09,9-10]", "a[9-10,09]"},
      {"a0,a00,a1", "a[0,00,1]", "a[0-1,00]"},
      {"a1,a2,a1,a2", "a[1-2,1-2]", "a[1,1-2,2]"},
      {"a0[21-32,27,070]", "a0[21-32,27,070]", "a0[21-27,27-32,070]"},
      {"a021,a0[22-23]", "a021,a0[22-23]", "a021,a0[22-23]"},
      {"a9,a10,a05", "a[9-10,05]", "a[9-10,05]"},
      {"a[9-11],a[10-12]", "a[9-11,10-12]", "a[9-10,10-11,11-12]"},
      {"a[9-11],a[10-12],a05", "a[9-11,10-12,05]", "a[9-11,05,10-12]"},
      {"a[1-3],a[5-7],a[2-6]", "a[1-3,5-7,2-6]", "a[1-2,2-3,3-5,5-6,6-7]"},
      {"[1-2]", "[1-2]", "[1-2]"},
      {"", "", ""},
  };
  for (const auto& c : cases) {
    auto in_order = hostlist_ranged(c.expr, HostlistOrder::kAsGiven);
    auto sorted = hostlist_ranged(c.expr, HostlistOrder::kSorted);
    ASSERT_TRUE(in_order.ok() && sorted.ok()) << c.expr;
    EXPECT_EQ(*in_order, c.in_order) << c.expr;
    EXPECT_EQ(*sorted, c.sorted) << c.expr;
  }
}

// Where Slurm 22.05's sorted list holds the wrong number of hosts (it prints
// "a[99,99-100,100]" here, losing a009..a012), Drover keeps every host.
TEST(Hostlist, SortedListKeepsEveryHost) {
  auto sorted = hostlist_ranged("a[99-100],a[99-100],a[009-012]", HostlistOrder::kSorted);
  ASSERT_TRUE(sorted.ok());
  EXPECT_EQ(*sorted, "a[99,99-100,100,009-012]");
}

// Given names (not an expression), each splits at its trailing digits; real
// Slurm prints the same for "a021,a022,a023,a9,b,a10".
TEST(Hostlist, NameBasedCompressionSplitsAtTrailingDigits) {
  Names names = {"a021", "a022", "a023", "a9", "b", "a10"};
  EXPECT_EQ(hostlist_compress(names), "a[021-023,9],b,a10");
  EXPECT_EQ(hostlist_compress_slurm_sorted(names), "a[9-10,021-023],b");
  hostlist_sort_slurm(names);
  EXPECT_EQ(joined(names), "a9 a10 a021 a022 a023 b");
}

struct FoldCase {
  const char* expr;
  const char* folded;  // nodeset -f
};

// Outputs of ClusterShell 1.9 `nodeset -f` for these inputs.
TEST(Hostlist, CanonicalFormAgreesWithNodeset) {
  const FoldCase cases[] = {
      {"gpu03,gpu01,gpu02,gpu1", "gpu[1,01-03]"},
      {"rack[1-2]-n[01-04]", "rack[1-2]-n[01-04]"},
      {"r1n1,r1n2,r2n1,r2n2", "r[1-2]n[1-2]"},
      {"x,x,a2,a1,a1", "a[1-2],x"},
      {"gpu[01-03],gpu[02-05]", "gpu[01-05]"},
      {"/dev/nvidia[0-7]", "/dev/nvidia[0-7]"},
      {"a1b2,a1b3", "a1b[2-3]"},
      {"h[05,64,96-101]", "h[05,64,96-99,100-101]"},
      {"h[05,9-10]", "h[9,05,10]"},
      {"h[05,9-10,11]", "h[9,05,10-11]"},
      {"h[05,99-100]", "h[05,99,100]"},
      {"h[1-3,10,17]", "h[1-3,10,17]"},
      {"a1b1c1,a2b2c2,a1b2c1,a2b1c1,a1b1c2,a3b1c1,a2b2c1", "a1b1c[1-2],a2b[1-2]c1,a1b2c1,a2b2c2,a3b1c1"},
      {"x0y0,x1y1,x0y1,x2y2,x2y0,x1y0", "x[0-1]y[0-1],x2y[0,2]"},
      {"r[1-2]n[01-02],r[1-2]n[1-2],r3n01", "r[1-2]n[1-2,01-02],r3n01"},
      {"h[96-101]m[1-2],h5m1", "h[97-101]m[1-2],h[5,96]m1,h96m2"},
      {"", ""},
  };
  for (const auto& c : cases) {
    auto r = hostlist_canonical(c.expr);
    ASSERT_TRUE(r.ok()) << c.expr;
    EXPECT_EQ(*r, c.folded) << c.expr;
  }
}

}  // namespace
}  // namespace drover
