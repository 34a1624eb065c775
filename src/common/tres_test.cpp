#include "common/tres.hpp"

#include <gtest/gtest.h>

namespace drover {
namespace {

TEST(Tres, ParsesTheSeedsLimits) {
  auto r = parse_tres("cpu=16000,gres/gpu=256,mem=1T,node=4,gres/gpu:h100=64,license/fsbw=10");
  ASSERT_TRUE(r.ok()) << r.error().message;
  TresMap expected = {{"cpu", 16000},      {"gres/gpu", 256},       {"mem", 1048576},
                      {"node", 4},         {"gres/gpu:h100", 64},   {"license/fsbw", 10}};
  EXPECT_EQ(*r, expected);
}

struct ParseCase {
  const char* text;
  TresMap tres;
};

TEST(Tres, NamesAreCaseInsensitiveAndCountsTakeSuffixes) {
  const ParseCase cases[] = {
      {"CPU=4,Mem=64G", {{"cpu", 4}, {"mem", 65536}}},
      {"GRES/gpu=2,License/FSBW=1", {{"gres/gpu", 2}, {"license/FSBW", 1}}},
      {"cpu=2K", {{"cpu", 2048}}},
      {"mem=2048", {{"mem", 2048}}},  // plain mem is MB
      {"billing=100,energy=5,vmem=1,pages=2,fs/DISK=10", {{"billing", 100}, {"energy", 5}, {"vmem", 1},
                                                          {"pages", 2}, {"fs/disk", 10}}},
      {"bb/cray=1G", {{"bb/cray", 1073741824}}},
      {" cpu = 8 , node=1 ", {{"cpu", 8}, {"node", 1}}},
      {"", {}},
  };
  for (const auto& c : cases) {
    auto r = parse_tres(c.text);
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.error().message;
    EXPECT_EQ(*r, c.tres) << c.text;
  }
}

TEST(Tres, ErrorsNameTheItemAndWhy) {
  const std::pair<const char*, const char*> cases[] = {
      {"cpus=4",
       "unknown TRES \"cpus\" in \"cpus=4\": expected cpu, mem, energy, node, billing, fs/disk, vmem, pages, "
       "gres/NAME[:TYPE], license/NAME, bb/NAME, fs/NAME or ic/NAME (did you mean \"cpu\"?)"},
      {"gpu=4",
       "unknown TRES \"gpu\" in \"gpu=4\": expected cpu, mem, energy, node, billing, fs/disk, vmem, pages, "
       "gres/NAME[:TYPE], license/NAME, bb/NAME, fs/NAME or ic/NAME (did you mean \"gres/gpu\"?)"},
      {"gpu:h100=4",
       "unknown TRES \"gpu:h100\" in \"gpu:h100=4\": expected cpu, mem, energy, node, billing, fs/disk, vmem, "
       "pages, gres/NAME[:TYPE], license/NAME, bb/NAME, fs/NAME or ic/NAME (did you mean \"gres/gpu:h100\"?)"},
      {"cpu=4,cpu=5", "TRES \"cpu\" is given twice in \"cpu=4,cpu=5\": keep one"},
      {"cpu", "TRES item \"cpu\" has no \"=\": expected name=count, e.g. cpu=16"},
      {"cpu=4,,node=1", "empty item in TRES list \"cpu=4,,node=1\": expected name=count items"},
      {"cpu=x", "TRES \"cpu=x\": count \"x\" is not a number: expected a whole number, optionally with K, M, G, T "
                "or P (multiples of 1024)"},
      {"cpu=-1", "TRES \"cpu=-1\": count \"-1\" is not a number: expected a whole number, optionally with K, M, G, "
                 "T or P (multiples of 1024)"},
      {"mem=1.5G", "TRES \"mem=1.5G\": memory size \"1.5G\" is not a whole number; Slurm takes no fractions (a "
                   "whole number of megabytes, or one with a suffix K, M, G, T or P, e.g. 64G)"},
      {"gres/=1",
       "unknown TRES \"gres/\" in \"gres/=1\": expected cpu, mem, energy, node, billing, fs/disk, vmem, pages, "
       "gres/NAME[:TYPE], license/NAME, bb/NAME, fs/NAME or ic/NAME (did you mean \"gres/\"?)"},
  };
  for (const auto& [text, message] : cases) {
    auto r = parse_tres(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error().message, message);
  }
}

TEST(Tres, CanonicalNames) {
  EXPECT_EQ(canonical_tres_name("CPU"), "cpu");
  EXPECT_EQ(canonical_tres_name("GRES/gpu"), "gres/gpu");
  EXPECT_EQ(canonical_tres_name("gres/gpu:h100"), "gres/gpu:h100");
  EXPECT_EQ(canonical_tres_name("fs/Disk"), "fs/disk");
  EXPECT_EQ(canonical_tres_name("cpus"), "");
  EXPECT_EQ(canonical_tres_name("gres/gpu:a:b"), "");
  EXPECT_EQ(canonical_tres_name("license/"), "");
}

// Lines from the Slurm 22.05 golden outputs (scontrol show node/job/partition, sacct).
TEST(Tres, FormatsAsSlurm) {
  const std::pair<const char*, const char*> scontrol[] = {
      {"cpu=128,mem=1000000,billing=128,gres/gpu=8,gres/gpu:h100=8",
       "cpu=128,mem=1000000M,billing=128,gres/gpu=8,gres/gpu:h100=8"},  // CfgTRES
      {"cpu=1,mem=4096,node=1,billing=1,gres/gpu=2,gres/gpu:a100=2",
       "cpu=1,mem=4G,node=1,billing=1,gres/gpu=2,gres/gpu:a100=2"},  // job TRES
      {"gres/gpu:h100=16,gres/gpu:a100=16,gres/gpu=32,billing=512,node=4,mem=4000000,cpu=512",
       "cpu=512,mem=4000000M,node=4,billing=512,gres/gpu=32,gres/gpu:a100=16,gres/gpu:h100=16"},  // partition
      {"cpu=256,mem=1024000,node=4,billing=256", "cpu=256,mem=1000G,node=4,billing=256"},
      {"license/fsbw=10,bb/cray=1,gres/gpu=1,energy=5", "energy=5,gres/gpu=1,license/fsbw=10,bb/cray=1"},
  };
  for (const auto& [in, out] : scontrol) {
    auto r = parse_tres(in);
    ASSERT_TRUE(r.ok()) << in;
    EXPECT_EQ(format_tres(*r), out);
  }
  auto alloc = parse_tres("cpu=1,mem=4G,node=1,billing=1,gres/gpu=2,gres/gpu:h100=2");
  ASSERT_TRUE(alloc.ok());
  EXPECT_EQ(format_tres_sacct(*alloc), "billing=1,cpu=1,gres/gpu:h100=2,gres/gpu=2,mem=4G,node=1");  // AllocTRES
  EXPECT_EQ(format_tres({}), "");
}

}  // namespace
}  // namespace drover
