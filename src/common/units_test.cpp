#include "common/units.hpp"

#include <gtest/gtest.h>

namespace drover {
namespace {

struct MemCase {
  const char* text;
  int64_t mb;
};

TEST(Units, ParsesMemorySizes) {
  const MemCase cases[] = {
      {"64G", 65536},       {"1000000", 1000000}, {"512M", 512},   {"1T", 1048576}, {"2048K", 2},
      {"1K", 1},            {"1025K", 2},         {"64GB", 65536}, {"64gb", 65536}, {"4g", 4096},
      {"0", 0},             {"1P", 1073741824},   {" 8G ", 8192},
  };
  for (const auto& c : cases) {
    auto r = parse_memory_mb(c.text);
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.error().message;
    EXPECT_EQ(*r, c.mb) << c.text;
  }
}

struct ErrCase {
  const char* text;
  const char* message;
};

TEST(Units, MemoryErrorsNameTheTextAndTheForms) {
  const ErrCase cases[] = {
      {"1.5G", "memory size \"1.5G\" is not a whole number; Slurm takes no fractions (a whole number of megabytes, "
               "or one with a suffix K, M, G, T or P, e.g. 64G)"},
      {"64X", "memory size \"64X\" is not a valid size: expected a whole number of megabytes, or one with a suffix "
              "K, M, G, T or P, e.g. 64G"},
      {"-1", "memory size \"-1\" is not a valid size: expected a whole number of megabytes, or one with a suffix "
             "K, M, G, T or P, e.g. 64G"},
      {"", "memory size \"\" is not a valid size: expected a whole number of megabytes, or one with a suffix K, M, "
           "G, T or P, e.g. 64G"},
      {"G", "memory size \"G\" is not a valid size: expected a whole number of megabytes, or one with a suffix K, "
            "M, G, T or P, e.g. 64G"},
      {"99999999999999999999", "memory size \"99999999999999999999\" is too large"},
      {"99999999999P", "memory size \"99999999999P\" is too large"},
  };
  for (const auto& c : cases) {
    auto r = parse_memory_mb(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.error().message, c.message);
  }
}

// Display values as real Slurm prints them (scontrol show node/partition/job,
// sacct AllocTRES in the golden outputs): mem=1000000M, mem=1000G (1024000),
// mem=4000000M, MinMemoryCPU=4G, mem=250G (256000).
TEST(Units, FormatsMemoryAsSlurm) {
  const std::pair<int64_t, const char*> cases[] = {
      {1000000, "1000000M"}, {1024000, "1000G"}, {4000000, "4000000M"}, {4096, "4G"},  {256000, "250G"},
      {1048576, "1T"},       {65536, "64G"},     {0, "0"},              {1, "1M"},     {1073741824, "1P"},
      {1024LL * 1073741824, "1024P"},
  };
  for (const auto& [mb, text] : cases) EXPECT_EQ(format_memory_mb(mb), text) << mb;
}

TEST(Units, CountsTake1024Multiples) {
  EXPECT_EQ(parse_count("8").value_or(-1), 8);
  EXPECT_EQ(parse_count("4K").value_or(-1), 4096);
  EXPECT_EQ(parse_count("4g").value_or(-1), 4294967296LL);
  EXPECT_EQ(parse_count("1P").value_or(-1), 1125899906842624LL);
  auto bad = parse_count("0x", "gres count");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "gres count \"0x\" is not a number: expected a whole number, optionally with K, M, G, T or P "
            "(multiples of 1024)");
  EXPECT_FALSE(parse_count("4KB").ok());
  EXPECT_FALSE(parse_count("9000000P").ok());
}

}  // namespace
}  // namespace drover
