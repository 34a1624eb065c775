// Host lists: expansion never crashes, and every compression of a valid list
// expands back to the same hosts (the same sequence for Slurm's in-order
// form, the same multiset for its sorted form, the same set for the
// ClusterShell-style canonical form).
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/hostlist.hpp"
#include "fuzz_check.hpp"

namespace {

constexpr std::size_t kMaxHosts = 128;  // keeps each input fast; longer lists reach no other code

std::string g_input;  // the input being run, for messages

void check(bool ok, const char* what) { drover::fuzz::check(ok, "hostlist_fuzz", what, g_input); }

std::vector<std::string> expand_or_die(const std::string& text, const char* what) {
  auto r = drover::hostlist_expand(text, kMaxHosts * 4);
  drover::fuzz::check(r.ok(), "hostlist_fuzz", what, text + (r.ok() ? "" : " -> " + r.error().message));
  return *r;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view expr(reinterpret_cast<const char*>(data), size);
  g_input.assign(expr);
  auto hosts = drover::hostlist_expand(expr, kMaxHosts);
  if (!hosts) return 0;

  check(expand_or_die(drover::hostlist_compress(*hosts), "in-order form does not expand") == *hosts,
        "hostlist_compress does not expand back to the same sequence");

  auto as_given = drover::hostlist_ranged(expr, drover::HostlistOrder::kAsGiven);
  check(as_given.ok(), "hostlist_ranged fails where hostlist_expand succeeds");
  check(expand_or_die(*as_given, "ranged form does not expand") == *hosts,
        "hostlist_ranged(kAsGiven) does not expand back to the same sequence");

  auto by_slurm = drover::hostlist_ranged(expr, drover::HostlistOrder::kSorted);
  check(by_slurm.ok(), "hostlist_ranged(kSorted) fails where hostlist_expand succeeds");
  check(sorted(expand_or_die(*by_slurm, "sorted form does not expand")) == sorted(*hosts),
        "hostlist_ranged(kSorted) loses or adds hosts");

  std::string canonical = drover::hostlist_compress_sorted(*hosts);
  std::vector<std::string> back = expand_or_die(canonical, "canonical form does not expand");
  check(std::set<std::string>(back.begin(), back.end()) == std::set<std::string>(hosts->begin(), hosts->end()),
        "hostlist_compress_sorted does not expand back to the same set");
  check(drover::hostlist_compress_sorted(back) == canonical, "the canonical form is not stable");
  return 0;
}
