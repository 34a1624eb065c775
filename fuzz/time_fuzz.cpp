// Time strings: durations and timestamps never crash, and a duration's
// display forms read back as the same duration.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/duration.hpp"
#include "fuzz_check.hpp"

namespace {

void check(bool ok, const char* what, const std::string& text) { drover::fuzz::check(ok, "time_fuzz", what, text); }

}  // namespace

// Local time is UTC here, so that every local time exists exactly once.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("TZ", "UTC", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto d = drover::parse_duration(text); d && *d != drover::kInfinite) {
    for (const std::string& shown : {drover::format_duration(*d), drover::format_duration_hms(*d)}) {
      auto again = drover::parse_duration(shown);
      check(again.ok() && *again == *d, "a formatted duration does not read back", shown);
    }
  }
  constexpr drover::UnixTime kNow = 1795994622;  // 2026-11-29T23:23:42 UTC
  for (auto bias : {drover::TimeBias::kFuture, drover::TimeBias::kPast}) {
    if (auto t = drover::parse_timestamp(text, kNow, bias)) {
      std::string shown = drover::format_timestamp(*t);
      auto again = drover::parse_timestamp(shown, kNow, bias);
      check(again.ok() && *again == *t, "a formatted timestamp does not read back", shown);
    }
  }
  return 0;
}
