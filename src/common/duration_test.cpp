#include "common/duration.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

namespace drover {
namespace {

struct DurCase {
  const char* text;
  Seconds seconds;
};

TEST(Duration, ParsesSlurmTimeLimits) {
  const DurCase cases[] = {
      {"90", 90 * 60},                 // minutes
      {"1:30", 90},                    // minutes:seconds
      {"48:00:00", 48 * 3600},         // hours:minutes:seconds
      {"12:00:00", 12 * 3600},
      {"7-00:00:00", 7 * 86400},       // days-hours:minutes:seconds
      {"1-12", 86400 + 12 * 3600},     // days-hours
      {"2-", 2 * 86400},               // days alone (Slurm 22.05's sbatch -t 1-: 1-00:00:00)
      {"1-12:30", 86400 + 12 * 3600 + 30 * 60},
      {"0-10:00:00", 10 * 3600},
      {"5", 300},
      {"0", 0},
      {"INFINITE", kInfinite},
      {"UNLIMITED", kInfinite},
      {"unlimited", kInfinite},
      {"-1", kInfinite},
      {" 04:00:00 ", 4 * 3600},
  };
  for (const auto& c : cases) {
    auto r = parse_duration(c.text);
    ASSERT_TRUE(r.ok()) << c.text << ": " << r.error().message;
    EXPECT_EQ(*r, c.seconds) << c.text;
  }
}

struct ErrCase {
  const char* text;
  const char* message;
};

TEST(Duration, ErrorsSayWhichFormWasExpected) {
  const std::string forms =
      ": expected minutes, minutes:seconds, hours:minutes:seconds, days-hours, days-hours:minutes, "
      "days-hours:minutes:seconds, or UNLIMITED";
  const ErrCase cases[] = {
      {"", "time \"\" is empty"},
      {"1:2:3:4", "time \"1:2:3:4\" has too many ':' fields"},
      {"1-2:3:4:5", "time \"1-2:3:4:5\" has too many ':' fields"},
      {"12h", "time \"12h\" has \"12h\" where a number belongs"},
      {"1:x0", "time \"1:x0\" has \"x0\" where a number belongs"},
      {"-5", "time \"-5\" has \"\" where a number belongs"},
      {"1-:", "time \"1-:\" has \"\" where a number belongs"},
      {"-", "time \"-\" has \"\" where a number belongs"},
      {"+5", "time \"+5\" has \"+5\" where a number belongs"},
      {"forever", "time \"forever\" has \"forever\" where a number belongs"},
      {"999999999999999999", "time \"999999999999999999\" is too long"},
  };
  for (const auto& c : cases) {
    auto r = parse_duration(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.error().message, std::string(c.message) + forms);
  }
}

// As squeue prints TIME and TIME_LIMIT (golden squeue_o_fields.txt: 0:00,
// 0:32, 10:00, 3:00:00, 7-00:00:00, 8-00:00:00) and scontrol/sacct print
// RunTime/TimeLimit/Elapsed/MaxWall (00:00:35, 01:00:00, 00:00:01, 04:00:00,
// MaxTime=7-00:00:00, MaxTime=UNLIMITED).
// scontrol update TimeLimit=: a limit, or +/- one that changes the current.
TEST(Duration, LimitChangesTakeASign) {
  auto set = parse_limit_change("1:00:00");
  ASSERT_TRUE(set);
  EXPECT_EQ(set->sign, 0);
  EXPECT_EQ(set->amount, 3600);
  auto more = parse_limit_change("+30");
  ASSERT_TRUE(more);
  EXPECT_EQ(more->sign, 1);
  EXPECT_EQ(more->amount, 1800);
  auto less = parse_limit_change("-1");  // one minute less, not INFINITE
  ASSERT_TRUE(less);
  EXPECT_EQ(less->sign, -1);
  EXPECT_EQ(less->amount, 60);
  EXPECT_FALSE(parse_limit_change("abc"));
  EXPECT_FALSE(parse_limit_change("+"));
}

TEST(Duration, FormatsAsSlurm) {
  const std::tuple<Seconds, const char*, const char*> cases[] = {
      {0, "0:00", "00:00:00"},
      {32, "0:32", "00:00:32"},
      {600, "10:00", "00:10:00"},
      {3 * 3600, "3:00:00", "03:00:00"},
      {7 * 86400, "7-00:00:00", "7-00:00:00"},
      {8 * 86400, "8-00:00:00", "8-00:00:00"},
      {35, "0:35", "00:00:35"},
      {3600, "1:00:00", "01:00:00"},
      {86400 + 3661, "1-01:01:01", "1-01:01:01"},
      {kInfinite, "UNLIMITED", "UNLIMITED"},
      {-5, "INVALID", "INVALID"},
  };
  for (const auto& [s, short_form, hms] : cases) {
    EXPECT_EQ(format_duration(s), short_form) << s;
    EXPECT_EQ(format_duration_hms(s), hms) << s;
  }
}

// Timestamps are read and shown in local time; the tests pin TZ to UTC.
class Timestamp : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tz = std::getenv("TZ");
    saved_ = tz ? tz : "";
    had_tz_ = tz != nullptr;
    setenv("TZ", "UTC", 1);
    tzset();
  }
  void TearDown() override {
    had_tz_ ? setenv("TZ", saved_.c_str(), 1) : unsetenv("TZ");
    tzset();
  }
  // 2026-11-29T23:23:42 UTC: the moment the sacct probes below were taken.
  static constexpr UnixTime kNow = 1795994622;

 private:
  std::string saved_;
  bool had_tz_ = false;
};

TEST_F(Timestamp, FormatsLikeScontrol) {
  EXPECT_EQ(format_timestamp(kNow), "2026-11-29T23:23:42");
  EXPECT_EQ(format_timestamp(kNoTime), "Unknown");
}

// SLURM_TIME_FORMAT: what Slurm 22.05's squeue, scontrol and sacct showed on
// the anchor cluster at 2026-12-05T07:59:05 UTC for these times.
TEST_F(Timestamp, ShowsTheFormsOfSlurmTimeFormat) {
  constexpr UnixTime now = 1796457545;
  const std::pair<UnixTime, const char*> relative[] = {
      {1796543944, "Tomorr 07:59"},  // --begin=now+1day
      {1796716744, "Tue 07:59"},     // now+3days
      {1797235144, "14 Dec 07:59"},  // now+9days
      {1801477230, "1 Feb 2027"},    // another year: no time
      {1796486400, "16:00:00"},      // today
      {1796418000, "Ystday 21:00"},
  };
  for (const auto& [t, text] : relative) EXPECT_EQ(format_timestamp(t, "relative", now), text);
  EXPECT_EQ(format_timestamp(1796543944, "%a %T", now), "Sun 07:59:04");
  EXPECT_EQ(format_timestamp(1796543944, "%s", now), "1796543944");
  EXPECT_EQ(format_timestamp(1796543944, "standard", now), "2026-12-06T07:59:04");
  EXPECT_EQ(format_timestamp(1796543944, "", now), "2026-12-06T07:59:04");
  EXPECT_EQ(format_timestamp(kNoTime, "relative", now), "Unknown");
  // The process-wide choice the commands make from their environment.
  set_timestamp_format("%H");
  EXPECT_EQ(format_timestamp(1796543944), "07");
  set_timestamp_format("");
  EXPECT_EQ(format_timestamp(1796543944), "2026-12-06T07:59:04");
}

struct TsCase {
  const char* text;
  const char* past;    // sacct -S (Slurm 22.05's answer, probed with sacct at kNow)
  const char* future;  // sbatch --begin
};

TEST_F(Timestamp, ParsesSlurmForms) {
  const TsCase cases[] = {
      {"now", "2026-11-29T23:23:42", "2026-11-29T23:23:42"},
      {"now+30", "2026-11-29T23:24:12", "2026-11-29T23:24:12"},
      {"now+1hour", "2026-11-30T00:23:42", "2026-11-30T00:23:42"},
      {"now+1hours", "2026-11-30T00:23:42", "2026-11-30T00:23:42"},
      {"now+2days", "2026-12-01T23:23:42", "2026-12-01T23:23:42"},
      {"now+1week", "2026-12-06T23:23:42", "2026-12-06T23:23:42"},
      {"now+5minutes", "2026-11-29T23:28:42", "2026-11-29T23:28:42"},
      {"now-1hour", "2026-11-29T22:23:42", "2026-11-29T22:23:42"},
      {"now + 1 hour", "2026-11-30T00:23:42", "2026-11-30T00:23:42"},
      {"NOW", "2026-11-29T23:23:42", "2026-11-29T23:23:42"},
      {"today", "2026-11-29T00:00:00", "2026-11-29T00:00:00"},
      {"tomorrow", "2026-11-30T00:00:00", "2026-11-30T00:00:00"},
      {"midnight", "2026-11-29T00:00:00", "2026-11-30T00:00:00"},
      {"noon", "2026-11-29T12:00:00", "2026-11-30T12:00:00"},
      {"fika", "2026-11-29T15:00:00", "2026-11-30T15:00:00"},
      {"teatime", "2026-11-29T16:00:00", "2026-11-30T16:00:00"},
      {"16:00", "2026-11-29T16:00:00", "2026-11-30T16:00:00"},
      {"16:00:30", "2026-11-29T16:00:30", "2026-11-30T16:00:30"},
      {"23:59", "2026-11-29T23:59:00", "2026-11-29T23:59:00"},
      {"4:30PM", "2026-11-29T16:30:00", "2026-11-30T16:30:00"},
      {"4:30pm", "2026-11-29T16:30:00", "2026-11-30T16:30:00"},
      {"2026-12-01", "2026-12-01T00:00:00", "2026-12-01T00:00:00"},
      {"2026-12-01T10:00", "2026-12-01T10:00:00", "2026-12-01T10:00:00"},
      {"2026-12-01T10:00:05", "2026-12-01T10:00:05", "2026-12-01T10:00:05"},
      {"12/01", "2025-12-01T00:00:00", "2026-12-01T00:00:00"},
      {"11/01", "2026-11-01T00:00:00", "2027-11-01T00:00:00"},
      {"12/01/27", "2027-12-01T00:00:00", "2027-12-01T00:00:00"},
      {"120127", "2027-12-01T00:00:00", "2027-12-01T00:00:00"},
      {"1201", "2025-12-01T00:00:00", "2026-12-01T00:00:00"},
      // The other forms sacct(1) lists, as Slurm 22.05's sacct -S read them on 2026-12-05.
      {"12.01", "2025-12-01T00:00:00", "2026-12-01T00:00:00"},
      {"12.01.27", "2027-12-01T00:00:00", "2027-12-01T00:00:00"},
      {"11/29-10:00", "2026-11-29T10:00:00", "2027-11-29T10:00:00"},
      {"11.29-10:00:30", "2026-11-29T10:00:30", "2027-11-29T10:00:30"},
      {"1129-10:00", "2026-11-29T10:00:00", "2027-11-29T10:00:00"},
      {"112926-10:00", "2026-11-29T10:00:00", "2026-11-29T10:00:00"},
      {"11/29/26-10:00", "2026-11-29T10:00:00", "2026-11-29T10:00:00"},
      {"11/29T10:00", "2026-11-29T10:00:00", "2027-11-29T10:00:00"},
      {"2026-11-29 10:00", "2026-11-29T10:00:00", "2026-11-29T10:00:00"},
      {"2026-11-29T", "2026-11-29T00:00:00", "2026-11-29T00:00:00"},
      // Looking back, only a later month is last year's (11/30 is still to
      // come, and this year's); looking ahead, any moment already past is
      // next year's, today's midnight too (sbatch --test-only --begin=12/05
      // on 2026-12-05 planned 2027-12-05T00:00:00).
      {"11/30", "2026-11-30T00:00:00", "2026-11-30T00:00:00"},
      {"11/29", "2026-11-29T00:00:00", "2027-11-29T00:00:00"},
  };
  for (const auto& c : cases) {
    auto past = parse_timestamp(c.text, kNow, TimeBias::kPast);
    auto future = parse_timestamp(c.text, kNow);
    ASSERT_TRUE(past.ok() && future.ok()) << c.text;
    EXPECT_EQ(format_timestamp(*past), c.past) << c.text;
    EXPECT_EQ(format_timestamp(*future), c.future) << c.text;
  }
}

TEST_F(Timestamp, ErrorsNameTheTextAndTheForms) {
  const std::string forms =
      "expected now[+count[seconds|minutes|hours|days|weeks]], today, tomorrow, midnight, noon, fika, teatime, "
      "HH:MM[:SS][AM|PM], YYYY-MM-DD[THH:MM[:SS]], MM/DD[/YY], MM.DD[.YY] or MMDD[YY], each date with an optional "
      "-HH:MM[:SS]";
  const std::pair<const char*, std::string> cases[] = {
      {"garbage", "bad time \"garbage\": " + forms},
      {"now+5min", "bad time \"now+5min\": " + forms},
      {"now+1hour+1", "bad time \"now+1hour+1\": " + forms},
      {"4pm", "bad time \"4pm\": " + forms},
      {"2026-12-01T10", "bad time \"2026-12-01T10\": " + forms},
      {"1700000000", "bad time \"1700000000\": " + forms},
      {"", "bad time \"\": the time is empty; " + forms},
      {"2026-12-01T25:00", "bad time \"2026-12-01T25:00\": hour 25 is out of range (0-23)"},
      {"12:61", "bad time \"12:61\": minute 61 is out of range (0-59)"},
      {"13:00PM", "bad time \"13:00PM\": hour 13 is out of range (1-12 with AM/PM)"},
      {"2026-13-01", "bad time \"2026-13-01\": month 13 is out of range (1-12)"},
      {"2026-02-30", "bad time \"2026-02-30\": day 30 is out of range: 2026-02 has 28 days"},
      {"1969-12-31", "bad time \"1969-12-31\": year 1969 is out of range (1970-9999)"},
      {"now+99999999999999weeks", "bad time \"now+99999999999999weeks\": the offset is too large"},
      {"now-60weeks+", "bad time \"now-60weeks+\": " + forms},
      {"now-3000weeks", "bad time \"now-3000weeks\": the result falls outside the years 1970-9999"},
  };
  for (const auto& [text, message] : cases) {
    auto r = parse_timestamp(text, kNow);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error().message, message);
  }
  EXPECT_TRUE(parse_timestamp("2028-02-29", kNow).ok());  // a leap day
}

}  // namespace
}  // namespace drover
