// TRES strings, gres specs, memory sizes and counts: parsing never crashes,
// and whatever parses prints in a form that parses back to the same value.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/gres.hpp"
#include "common/tres.hpp"
#include "common/units.hpp"
#include "fuzz_check.hpp"

namespace {

void check(bool ok, const char* what, const std::string& text) {
  drover::fuzz::check(ok, "tres_gres_fuzz", what, text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto tres = drover::parse_tres(text)) {
    for (const std::string& shown : {drover::format_tres(*tres), drover::format_tres_sacct(*tres)}) {
      auto again = drover::parse_tres(shown);
      check(again.ok() && *again == *tres, "formatted TRES do not read back", shown);
    }
  }
  if (auto gres = drover::parse_gres_list(text)) {
    std::string shown = drover::format_gres_list(*gres);
    auto again = drover::parse_gres_list(shown);
    check(again.ok() && *again == *gres, "a formatted gres list does not read back", shown);
  }
  if (auto mb = drover::parse_memory_mb(text)) {
    std::string shown = drover::format_memory_mb(*mb);
    auto again = drover::parse_memory_mb(shown);
    check(again.ok() && *again == *mb, "a formatted memory size does not read back", shown);
  }
  (void)drover::parse_count(text);
  return 0;
}
