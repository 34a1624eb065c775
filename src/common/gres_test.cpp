#include "common/gres.hpp"

#include <gtest/gtest.h>

namespace drover {
namespace {

struct GresCase {
  const char* text;
  std::vector<GresSpec> specs;
  const char* formatted;
};

TEST(Gres, ParsesNodeAndJobSpecs) {
  const GresCase cases[] = {
      {"gpu:8", {{"gpu", "", 8}}, "gpu:8"},
      {"gpu:h100:8", {{"gpu", "h100", 8}}, "gpu:h100:8"},
      {"gpu:a100:4,gpu:1g.10gb:2", {{"gpu", "a100", 4}, {"gpu", "1g.10gb", 2}}, "gpu:a100:4,gpu:1g.10gb:2"},
      {"gpu", {{"gpu", "", 1}}, "gpu:1"},
      {"gpu:h100", {{"gpu", "h100", 1}}, "gpu:h100:1"},
      {"gpu:h100:8(S:0-1)", {{"gpu", "h100", 8}}, "gpu:h100:8"},
      {"gpu:2(S:0,1),mps:100", {{"gpu", "", 2}, {"mps", "", 100}}, "gpu:2,mps:100"},
      {"gres/gpu:2", {{"gpu", "", 2}}, "gpu:2"},
      {"gpu:0", {{"gpu", "", 0}}, "gpu:0"},
      {"mps:2K", {{"mps", "", 2048}}, "mps:2048"},
      {"bandwidth:lustre:no_consume:4G", {{"bandwidth", "lustre", 4294967296LL, true}},
       "bandwidth:lustre:no_consume:4294967296"},
      {"", {}, "(null)"},
      {"(null)", {}, "(null)"},
  };
  for (const auto& c : cases) {
    auto r = parse_gres_list(c.text);
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.error().message;
    EXPECT_EQ(*r, c.specs) << c.text;
    EXPECT_EQ(format_gres_list(*r), c.formatted);
  }
}

TEST(Gres, ErrorsNameTheBadItem) {
  const std::pair<const char*, const char*> cases[] = {
      {"gpu:x:y:z",
       "gres \"gpu:x:y:z\" has too many fields: expected name[:type][:count], e.g. gpu:8 or gpu:h100:8 (or "
       "name[:type]:no_consume:count)"},
      {"gpu:h100:0x",
       "gres \"gpu:h100:0x\": gres count \"0x\" is not a number: expected a whole number, optionally with K, M, "
       "G, T or P (multiples of 1024)"},
      {"gpu::2", "gres \"gpu::2\" has an empty type: expected name[:type][:count], e.g. gpu:8 or gpu:h100:8"},
      {":2", "gres \":2\" has an empty name: expected name[:type][:count], e.g. gpu:8 or gpu:h100:8"},
      {"gpu:8,,mps:1",
       "empty item in gres list \"gpu:8,,mps:1\": expected name[:type][:count], e.g. gpu:8 or gpu:h100:8"},
      {"gpu:8(S:0)x",
       "gres \"gpu:8(S:0)x\" has text after its \"(...)\": expected name[:type][:count], e.g. gpu:8 or "
       "gpu:h100:8"},
      {"g pu:1",
       "gres \"g pu:1\": \"g pu\" may not hold spaces, \"=\", \"/\" or parentheses; expected "
       "name[:type][:count], e.g. gpu:8 or gpu:h100:8"},
  };
  for (const auto& [text, message] : cases) {
    auto r = parse_gres_list(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error().message, message);
  }
}

TEST(Gres, TresNames) {
  EXPECT_EQ((GresSpec{"gpu", "", 8}.tres_name()), "gres/gpu");
  EXPECT_EQ((GresSpec{"gpu", "h100", 8}.tres_name()), "gres/gpu:h100");
}

}  // namespace
}  // namespace drover
