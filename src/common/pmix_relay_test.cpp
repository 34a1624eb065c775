#include "common/pmix_relay.hpp"

#include <gtest/gtest.h>

namespace drover::pmix_wire {
namespace {

struct Sent {
  std::map<int, std::string> to;  // bytes per node
  std::vector<Frame> frames(int node) const {
    FrameReader r;
    auto it = to.find(node);
    if (it != to.end()) r.feed(it->second.data(), it->second.size());
    std::vector<Frame> out;
    Frame f;
    while (r.next(f)) out.push_back(f);
    EXPECT_FALSE(r.bad());
    return out;
  }
};

Relay relay(int nnodes, Sent& s) {
  Relay r(nnodes, [&s](int node, const std::string& b) { s.to[node] += b; });
  for (int i = 0; i < nnodes; ++i) r.joined(i);
  return r;
}

void feed(Relay& r, int node, const std::string& bytes) { ASSERT_TRUE(r.feed(node, bytes.data(), bytes.size())); }

TEST(PmixWire, FramesSurviveAnySplit) {
  std::string bytes = encode({"F", "0", "*"}, std::string("a\nb\0c", 5)) + encode({"A", "3"}, "");
  for (std::size_t cut = 0; cut <= bytes.size(); ++cut) {
    FrameReader r;
    std::vector<Frame> got;
    Frame f;
    r.feed(bytes.data(), cut);
    while (r.next(f)) got.push_back(f);
    r.feed(bytes.data() + cut, bytes.size() - cut);
    while (r.next(f)) got.push_back(f);
    ASSERT_EQ(got.size(), 2u) << cut;
    EXPECT_EQ(got[0].words, (std::vector<std::string>{"F", "0", "*"}));
    EXPECT_EQ(got[0].payload, std::string("a\nb\0c", 5));
    EXPECT_EQ(got[1].words, (std::vector<std::string>{"A", "3"}));
    EXPECT_EQ(got[1].payload, "");
  }
}

TEST(PmixWire, MalformedHeaderIsBad) {
  FrameReader r;
  r.feed("F 0 * x\n", 8);
  Frame f;
  EXPECT_FALSE(r.next(f));
  EXPECT_TRUE(r.bad());
  FrameReader endless;
  std::string junk(600, 'x');
  endless.feed(junk.data(), junk.size());
  EXPECT_FALSE(endless.next(f));
  EXPECT_TRUE(endless.bad());
}

TEST(PmixWire, NodeLists) {
  EXPECT_EQ(parse_nodes("*", 3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(parse_nodes("2,0", 3), (std::vector<int>{0, 2}));
  EXPECT_TRUE(parse_nodes("3", 3).empty());
  EXPECT_TRUE(parse_nodes("a", 3).empty());
  EXPECT_EQ(nodes_text({2, 0, 1}, 3), "*");
  EXPECT_EQ(nodes_text({2, 0}, 3), "0,2");
}

TEST(PmixRelay, FenceOfAllNodesConcatenatesInNodeOrder) {
  Sent s;
  Relay r = relay(4, s);
  feed(r, 2, encode({"F", "0", "*"}, "cc"));
  feed(r, 0, encode({"F", "0", "*"}, "a"));
  feed(r, 3, encode({"F", "0", "*"}, ""));
  EXPECT_TRUE(s.to.empty());  // node 1 has not contributed yet
  feed(r, 1, encode({"F", "0", "*"}, "bbb"));
  for (int n = 0; n < 4; ++n) {
    auto f = s.frames(n);
    ASSERT_EQ(f.size(), 1u) << n;
    EXPECT_EQ(f[0].words, (std::vector<std::string>{"F", "0", "*"}));
    EXPECT_EQ(f[0].payload, "abbbcc");
  }
}

TEST(PmixRelay, FencesOfDifferentSetsAndSequencesStayApart) {
  Sent s;
  Relay r = relay(3, s);
  feed(r, 0, encode({"F", "0", "0,2"}, "x") + encode({"F", "0", "*"}, "1") + encode({"F", "1", "*"}, "4"));
  feed(r, 1, encode({"F", "0", "*"}, "2"));
  feed(r, 2, encode({"F", "0", "*"}, "3"));
  EXPECT_TRUE(s.frames(1).size() == 1 && s.frames(1)[0].payload == "123");
  feed(r, 2, encode({"F", "0", "0,2"}, "y"));
  auto f0 = s.frames(0);
  ASSERT_EQ(f0.size(), 2u);
  EXPECT_EQ(f0[1].words, (std::vector<std::string>{"F", "0", "0,2"}));
  EXPECT_EQ(f0[1].payload, "xy");
  EXPECT_EQ(s.frames(1).size(), 1u);  // not a participant of the subset fence
}

TEST(PmixRelay, ANodeThatLeavesFailsItsFences) {
  Sent s;
  Relay r = relay(3, s);
  feed(r, 0, encode({"F", "0", "*"}, "a"));
  r.left(1);
  r.left(1);  // srun may learn it twice (connection closed, step record)
  auto f0 = s.frames(0);
  ASSERT_EQ(f0.size(), 1u);
  EXPECT_EQ(f0[0].words, (std::vector<std::string>{"X", "0", "*"}));
  feed(r, 2, encode({"F", "0", "*"}, "c"));  // arrives after: fails at once
  ASSERT_EQ(s.frames(2).size(), 1u);
  EXPECT_EQ(s.frames(2)[0].words[0], "X");
}

TEST(PmixRelay, DirectModexIsRoutedBothWays) {
  Sent s;
  Relay r = relay(3, s);
  feed(r, 0, encode({"D", "7", "2", "5"}));
  auto q = s.frames(2);
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].words, (std::vector<std::string>{"D", "7", "0", "5"}));
  feed(r, 2, encode({"R", "7", "0", "0"}, "blob"));
  auto a = s.frames(0);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].words, (std::vector<std::string>{"R", "7", "2", "0"}));
  EXPECT_EQ(a[0].payload, "blob");
  // A question to a node that leaves before answering is answered "not found".
  feed(r, 1, encode({"D", "8", "2", "6"}));
  r.left(2);
  auto b = s.frames(1);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].words, (std::vector<std::string>{"R", "8", "2", "1"}));
}

TEST(PmixRelay, WhatIsForANodeThatHasNotJoinedWaitsForIt) {
  Sent s;
  Relay r(2, [&s](int node, const std::string& b) { s.to[node] += b; });
  r.joined(0);
  feed(r, 0, encode({"D", "1", "1", "3"}));
  EXPECT_TRUE(s.to.empty());
  r.joined(1);
  auto q = s.frames(1);
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].words, (std::vector<std::string>{"D", "1", "0", "3"}));
}

TEST(PmixRelay, AbortReachesEveryOtherNode) {
  Sent s;
  Relay r = relay(3, s);
  feed(r, 1, encode({"A", "3"}, "rank 2 called MPI_Abort"));
  EXPECT_EQ(r.aborts(), 1);
  EXPECT_EQ(r.abort_message(), "rank 2 called MPI_Abort");
  EXPECT_TRUE(s.frames(1).empty());
  for (int n : {0, 2}) {
    auto f = s.frames(n);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].words, (std::vector<std::string>{"A", "3"}));
  }
}

}  // namespace
}  // namespace drover::pmix_wire
