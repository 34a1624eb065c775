#include "config/lexer.hpp"

#include <gtest/gtest.h>

namespace drover::config {
namespace {

struct Lexed {
  std::vector<LogicalLine> lines;
  Diagnostics diags;
};

Lexed lex(std::string_view text) {
  Lexed out;
  out.lines = lex_config(text, "t.conf", out.diags);
  return out;
}

std::string words_of(const LogicalLine& l) {
  std::string out;
  for (const auto& w : l.words) {
    out += "[" + w.key + (w.has_value ? "=" + w.value : "") + "@" + std::to_string(w.key_loc.line) + ":" +
           std::to_string(w.key_loc.column) + (w.has_value ? "/" + std::to_string(w.value_loc.line) + ":" +
                                                                 std::to_string(w.value_loc.column)
                                                           : "") +
           "]";
  }
  return out;
}

struct Case {
  const char* name;
  const char* text;
  std::vector<std::string> lines;  // words_of each logical line
};

class LexerCases : public ::testing::TestWithParam<Case> {};

TEST_P(LexerCases, SplitsWordsWithLocations) {
  auto r = lex(GetParam().text);
  EXPECT_TRUE(r.diags.empty());
  std::vector<std::string> got;
  for (const auto& l : r.lines) got.push_back(words_of(l));
  EXPECT_EQ(got, GetParam().lines);
}

INSTANTIATE_TEST_SUITE_P(
    Lexer, LexerCases,
    ::testing::Values(
        Case{"plain", "A=1 B=2\n", {"[A=1@1:1/1:3][B=2@1:5/1:7]"}},
        Case{"comment_and_blank", "# c\n\n  A=1 # tail\n", {"[A=1@3:3/3:5]"}},
        Case{"continuation", "NodeName=a \\\n  CPUs=4\n", {"[NodeName=a@1:1/1:10][CPUs=4@2:3/2:8]"}},
        Case{"continuation_no_space", "A=1\\\nB=2\n", {"[A=1@1:1/1:3][B=2@2:1/2:3]"}},
        Case{"quoted_value_with_spaces", "Reason=\"down for maint\" X=1",
             {"[Reason=down for maint@1:1/1:8][X=1@1:25/1:27]"}},
        Case{"hash_inside_quotes", "Reason=\"a#b\"", {"[Reason=a#b@1:1/1:8]"}},
        Case{"escaped_hash", "Reason=a\\#b", {"[Reason=a#b@1:1/1:8]"}},
        Case{"crlf", "A=1\r\nB=2\r\n", {"[A=1@1:1/1:3]", "[B=2@2:1/2:3]"}},
        Case{"word_without_value", "Include /etc/x.conf", {"[Include@1:1][/etc/x.conf@1:9]"}},
        Case{"empty_value", "B=1 A=", {"[B=1@1:1/1:3][A=@1:5/1:7]"}},
        // Blanks around '=' as Slurm allows them ("KillWait = 30", "PriorityWeightAge= 1000").
        Case{"blanks_around_equals", "A = 1 B= 2 C =3\tD\t=\t\"x y\"",
             {"[A=1@1:1/1:5][B=2@1:7/1:10][C=3@1:12/1:15][D=x y@1:17/1:21]"}},
        Case{"blanks_then_continuation", "A = \\\n 1", {"[A=1@1:1/2:2]"}},
        Case{"equals_at_end", "A =", {"[A=@1:1/1:4]"}},
        Case{"value_with_equals", "GrpTRES=cpu=1,gres/gpu=2", {"[GrpTRES=cpu=1,gres/gpu=2@1:1/1:9]"}},
        Case{"tabs", "\tA=1\tB=2", {"[A=1@1:2/1:4][B=2@1:6/1:8]"}},
        Case{"continuation_at_eof", "A=1 \\", {"[A=1@1:1/1:3]"}}),
    [](const auto& info) { return std::string(info.param.name); });

// As Slurm reads it, a blank after '=' makes the next word the value, even another Key=Value: said once.
TEST(Lexer, AValueThatLooksLikeAKeyAfterABlankIsAWarning) {
  auto r = lex("MailProg= SlurmctldPort=6818\nGrpTRES= cpu=4\nA= \"srun --mem=0\"\n");
  ASSERT_EQ(r.lines.size(), 3u);
  EXPECT_EQ(words_of(r.lines[2]), "[A=srun --mem=0@3:1/3:4]");
  EXPECT_EQ(words_of(r.lines[0]), "[MailProg=SlurmctldPort=6818@1:1/1:11]");
  ASSERT_EQ(r.diags.items().size(), 2u);
  EXPECT_EQ(r.diags.items()[0].format(),
            "t.conf:1:11: warning: the value of MailProg is \"SlurmctldPort=6818\": a blank after '=' makes the next "
            "word the value (Slurm reads it so too) [spaced-value]\n"
            "    fix: write MailProg=VALUE, or remove MailProg if it should be empty");
  EXPECT_EQ(r.diags.items()[1].loc.line, 2);
}

TEST(Lexer, UnterminatedQuoteIsAnErrorAtTheQuote) {
  auto r = lex("Reason=\"never closed\n");
  ASSERT_EQ(r.diags.items().size(), 1u);
  EXPECT_EQ(r.diags.items()[0].format(),
            "t.conf:1:8: error: unterminated quote in the value of Reason [bad-syntax]\n"
            "    fix: close the quote with \" before the end of the line");
  ASSERT_EQ(r.lines.size(), 1u);
  EXPECT_EQ(r.lines[0].words[0].value, "never closed");
}

// A reader of the global options alone (the commands) skips the lines of
// the kinds it names, with their continuations, and reports nothing on them.
TEST(Lexer, SkippedKindsOfLineAreDroppedWithTheirContinuations) {
  const std::string_view kinds[] = {"NodeName", "PartitionName"};
  Diagnostics diags;
  auto lines = lex_config(
      "A=1\n"
      "  nodename=n[1-2] \\\n"
      "     CPUs=4 Reason=\"never closed\n"
      "B=2\n"
      "PartitionName=p Nodes=n1 # a comment that ends in a backslash \\\n"
      "C=3\n"
      "PartitionName=q Reason=\"a#b \\\n"
      "  X=1\n"
      "D=4 NodeName=n3\n"
      "NodeNameX=5\n"
      "NodeName = n4 CPUs=2\n"
      "NodeName\n"
      "PartitionName=last \\",
      "t.conf", diags, kinds);
  std::vector<std::string> got;
  for (const auto& l : lines) got.push_back(words_of(l));
  EXPECT_EQ(got, (std::vector<std::string>{"[A=1@1:1/1:3]", "[B=2@4:1/4:3]", "[C=3@6:1/6:3]",
                                           "[D=4@9:1/9:3][NodeName=n3@9:5/9:14]", "[NodeNameX=5@10:1/10:11]",
                                           "[NodeName@12:1]"}));
  EXPECT_TRUE(diags.empty()) << diags.items().front().format();
  EXPECT_EQ(lex_config("NodeName=n1 \\\n  CPUs=4\nB=2\n", "t.conf", diags).size(), 2u) << "nothing skipped by default";
}

TEST(Lexer, BinaryGarbageDoesNotCrash) {
  std::string junk;
  for (int i = 0; i < 256; ++i) junk += static_cast<char>(i);
  junk += "\\\n\"=\\#==";
  auto r = lex(junk);
  EXPECT_FALSE(r.lines.empty());
}

}  // namespace
}  // namespace drover::config
