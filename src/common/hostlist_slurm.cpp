// Slurm's two compressions of a host list: in the order given (`scontrol
// show hostlist`) and sorted (`scontrol show hostlistsorted`).
//
// The model, as measured on Slurm 22.05 (re-implemented, not copied):
// - a host is a prefix and a number (its digits as written); hosts are
//   pushed in order, and a host joins the range before it when it has the
//   same prefix, the next value and a compatible width (the same number of
//   digits, or both unpadded: "9","10" chain, "8","09" do not);
// - printing puts consecutive ranges of one prefix in one bracket;
// - sorting orders the *ranges* by prefix (natural order), then names
//   without a number first, then by the range's first number (shorter digit
//   string first, so "[9-11]" sorts before "05"); then runs of consecutive
//   ranges that overlap (same prefix, compatible widths) are merged as a
//   sorted multiset, which is what makes "a[1-3],a[1-5]" print
//   "a[1,1-2,2-3,3-5]".
#include <algorithm>

#include "common/hostlist.hpp"
#include "common/hostlist_internal.hpp"

namespace drover {
namespace {

using hostlist_detail::digits_less;

// A host as Slurm's host list keeps it.
struct SplitHost {
  std::string_view prefix;
  std::string_view digits;  // empty: a name without a number
};

SplitHost split_host(std::string_view host) {
  std::size_t n = hostlist_detail::trailing_digits(host);
  return {host.substr(0, host.size() - n), host.substr(host.size() - n)};
}

// Hosts [begin, end) of a sequence, forming one range.
struct SlurmRange {
  std::size_t begin = 0;
  std::size_t end = 0;
};

bool joins(const SplitHost& last, const SplitHost& next) {
  return !last.digits.empty() && !next.digits.empty() && last.prefix == next.prefix &&
         hostlist_detail::is_successor(last.digits, next.digits) &&
         hostlist_detail::same_width_class(last.digits, next.digits);
}

std::vector<SlurmRange> slurm_ranges(const std::vector<SplitHost>& hosts) {
  std::vector<SlurmRange> ranges;
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    if (!ranges.empty() && joins(hosts[i - 1], hosts[i])) {
      ranges.back().end = i + 1;
    } else {
      ranges.push_back({i, i + 1});
    }
  }
  return ranges;
}

std::string range_text(const std::vector<SplitHost>& hosts, const SlurmRange& r) {
  std::string out(hosts[r.begin].digits);
  if (r.end - r.begin > 1) out += "-" + std::string(hosts[r.end - 1].digits);
  return out;
}

bool same_numbered_prefix(const SplitHost& a, const SplitHost& b) {
  return !a.digits.empty() && !b.digits.empty() && a.prefix == b.prefix;
}

// Slurm's ranged string: consecutive ranges of one prefix share a bracket.
std::string ranged_string(const std::vector<SplitHost>& hosts) {
  std::vector<SlurmRange> ranges = slurm_ranges(hosts);
  std::string out;
  for (std::size_t i = 0; i < ranges.size();) {
    const SplitHost& first = hosts[ranges[i].begin];
    std::size_t j = i + 1;
    while (j < ranges.size() && same_numbered_prefix(first, hosts[ranges[j].begin])) ++j;
    if (!out.empty()) out += ',';
    out += first.prefix;
    bool bracket = j - i > 1 || ranges[i].end - ranges[i].begin > 1;
    if (bracket) out += '[';
    for (std::size_t k = i; k < j; ++k) out += (k > i ? "," : "") + range_text(hosts, ranges[k]);
    if (bracket) out += ']';
    i = j;
  }
  return out;
}

// Numeric order of digit strings, padding ignored.
bool value_less(std::string_view a, std::string_view b) {
  auto strip = [](std::string_view s) { return s.substr(std::min(s.find_first_not_of('0'), s.size())); };
  return digits_less(strip(a), strip(b));
}

// Slurm's range order: prefix (natural), no number first, first number.
bool range_less(const SplitHost& x, const SplitHost& y) {
  if (int c = hostlist_detail::natural_compare(x.prefix, y.prefix); c != 0) return c < 0;
  if (x.digits.empty() != y.digits.empty()) return x.digits.empty();
  return digits_less(x.digits, y.digits);
}

// Whether `next` (a range's first host) overlaps a run of ranges whose
// largest number is `top` (a host of the run).
bool overlaps(const SplitHost& run_first, const SplitHost& top, const SplitHost& next) {
  return same_numbered_prefix(run_first, next) &&
         hostlist_detail::same_width_class(run_first.digits, next.digits) && !value_less(top.digits, next.digits);
}

// The positions of `hosts` in Slurm's sorted order.
std::vector<std::size_t> slurm_sorted_order(const std::vector<SplitHost>& hosts) {
  std::vector<SlurmRange> ranges = slurm_ranges(hosts);
  std::stable_sort(ranges.begin(), ranges.end(), [&](const SlurmRange& a, const SlurmRange& b) {
    return range_less(hosts[a.begin], hosts[b.begin]);
  });
  std::vector<std::size_t> order;
  order.reserve(hosts.size());
  for (std::size_t i = 0; i < ranges.size();) {
    std::size_t run_start = order.size();
    std::size_t top = ranges[i].end - 1;
    std::size_t j = i;
    do {
      for (std::size_t h = ranges[j].begin; h < ranges[j].end; ++h) order.push_back(h);
      if (value_less(hosts[top].digits, hosts[ranges[j].end - 1].digits)) top = ranges[j].end - 1;
      ++j;
    } while (j < ranges.size() && overlaps(hosts[ranges[i].begin], hosts[top], hosts[ranges[j].begin]));
    if (j - i > 1) {
      std::stable_sort(order.begin() + static_cast<long>(run_start), order.end(),
                       [&](std::size_t a, std::size_t b) { return value_less(hosts[a].digits, hosts[b].digits); });
    }
    i = j;
  }
  return order;
}

std::vector<SplitHost> split_all(const std::vector<std::string>& hosts) {
  std::vector<SplitHost> out;
  out.reserve(hosts.size());
  for (const auto& h : hosts) {
    if (!h.empty()) out.push_back(split_host(h));
  }
  return out;
}

std::vector<SplitHost> reordered(const std::vector<SplitHost>& hosts, const std::vector<std::size_t>& order) {
  std::vector<SplitHost> out;
  out.reserve(order.size());
  for (std::size_t i : order) out.push_back(hosts[i]);
  return out;
}

}  // namespace

std::string hostlist_compress(const std::vector<std::string>& hosts) { return ranged_string(split_all(hosts)); }

void hostlist_sort_slurm(std::vector<std::string>& hosts) {
  std::vector<std::string> named;
  for (auto& h : hosts) {
    if (!h.empty()) named.push_back(std::move(h));
  }
  std::vector<std::string> sorted;
  sorted.reserve(named.size());
  for (std::size_t i : slurm_sorted_order(split_all(named))) sorted.push_back(std::move(named[i]));
  hosts = std::move(sorted);
}

std::string hostlist_compress_slurm_sorted(std::vector<std::string> hosts) {
  std::vector<SplitHost> split = split_all(hosts);
  return ranged_string(reordered(split, slurm_sorted_order(split)));
}

Result<std::string> hostlist_ranged(std::string_view expr, HostlistOrder order, std::size_t max_hosts) {
  std::vector<std::size_t> at;
  auto hosts = hostlist_detail::expand(expr, max_hosts, &at);
  if (!hosts) return hosts.error();
  std::vector<SplitHost> split;
  split.reserve(hosts->size());
  for (std::size_t i = 0; i < hosts->size(); ++i) {
    std::string_view h = (*hosts)[i];
    split.push_back({h.substr(0, at[i]), h.substr(at[i])});
  }
  if (order == HostlistOrder::kSorted) split = reordered(split, slurm_sorted_order(split));
  return ranged_string(split);
}

}  // namespace drover
