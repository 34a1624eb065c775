// Canonical folding of a set of host names, matching ClusterShell's
// `nodeset -f` exactly (hostlist_compress_sorted).
//
// The model, as observed from ClusterShell 1.9 and re-implemented here:
// - every run of digits in a name is one dimension; the text around them is
//   the name's pattern ("rack1-n01" -> "rack%s-n%s" with ("1","01"));
// - patterns print in byte order of the pattern text (a literal '%' written
//   as "%%", each dimension as "%s");
// - one dimension: the distinct digit strings, ordered shorter first then by
//   value, printed by ClusterShell's range printer (RangesetPrinter below),
//   bracketed when there is more than one name;
// - several dimensions: when the points form a full cartesian product, one
//   vector; otherwise ClusterShell's greedy merge (RangeSetND): start from the
//   single points, sort the vectors, merge neighbours that differ in exactly
//   one dimension (easy passes), and once a pass changes nothing, scan all
//   later vectors for each one (full passes) until nothing changes. The full
//   pass is indexed by "all dimensions but one" so it is not quadratic.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <unordered_map>

#include "common/hostlist.hpp"
#include "common/hostlist_internal.hpp"

namespace drover {
namespace {

using hostlist_detail::digits_less;
using hostlist_detail::is_digit;
using hostlist_detail::is_padded;

// Names sharing one pattern: `dims` digit strings per name, flattened.
struct PatternGroup {
  std::size_t dims = 0;
  std::vector<std::string_view> indices;
};

void add_name(std::map<std::string, PatternGroup>& groups, std::string_view name) {
  std::string pattern;
  std::vector<std::string_view> idx;
  for (std::size_t i = 0; i < name.size();) {
    if (!is_digit(name[i])) {
      pattern += name[i] == '%' ? "%%" : std::string(1, name[i]);
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < name.size() && is_digit(name[j])) ++j;
    idx.push_back(name.substr(i, j - i));
    pattern += "%s";
    i = j;
  }
  PatternGroup& g = groups[pattern];
  g.dims = idx.size();
  g.indices.insert(g.indices.end(), idx.begin(), idx.end());
}

// Fills the pattern's slots with `args` and turns "%%" back into '%'.
std::string render(std::string_view pattern, const std::vector<std::string>& args) {
  std::string out;
  std::size_t next = 0;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      out += pattern[i + 1] == 's' ? args[next++] : "%";
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

// value(hi) - value(lo) as a decimal string without leading zeros; hi >= lo.
std::string difference(std::string_view hi, std::string_view lo) {
  std::string out;
  int borrow = 0;
  for (std::size_t i = 0; i < hi.size(); ++i) {
    int a = hi[hi.size() - 1 - i] - '0' - borrow;
    int b = i < lo.size() ? lo[lo.size() - 1 - i] - '0' : 0;
    borrow = a < b ? 1 : 0;
    out.insert(out.begin(), static_cast<char>('0' + a + 10 * borrow - b));
  }
  std::size_t nz = out.find_first_not_of('0');
  return nz == std::string::npos ? "0" : out.substr(nz);
}

// ClusterShell's 1-D printer (RangeSet with autostep off), as a state
// machine over the values in digits_less order. The state is an arithmetic
// progression of values plus a padding mode; the mode is set only when a
// state starts afresh, so a progression may inherit the padded mode of an
// earlier value ("05,64,96-101" prints "05,64,96-99,100-101").
class RangesetPrinter {
 public:
  void add(std::string_view v) {
    if (members_.empty()) return restart(v);
    bool pad_break = padded_ ? v.size() != width_ : is_padded(v);
    std::string step = pad_break ? std::string() : difference(v, members_.back());
    bool step_break = !pad_break && !step_.empty() && step_ != step;
    if (!pad_break && !step_break) {
      members_.push_back(v);
      step_ = step;
    } else if (step_.empty() || step_ == "1") {
      emit_range();
      restart(v);
      if (step_break) step_ = step;  // the gap becomes the step of the new state
    } else if (pad_break) {
      emit_singles(members_.size());
      restart(v);
    } else {
      emit_singles(members_.size() - 1);
      members_ = {members_.back(), v};
      step_ = step;
    }
  }

  std::string finish() {
    if (!members_.empty()) step_.empty() || step_ == "1" ? emit_range() : emit_singles(members_.size());
    return out_;
  }

 private:
  void restart(std::string_view v) {
    members_ = {v};
    padded_ = is_padded(v);
    width_ = v.size();
    step_.clear();
  }
  void emit(std::string_view text) {
    if (!out_.empty()) out_ += ',';
    out_ += text;
  }
  void emit_range() {
    emit(members_.size() == 1 ? std::string(members_[0])
                              : std::string(members_.front()) + "-" + std::string(members_.back()));
  }
  void emit_singles(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) emit(members_[i]);
  }

  std::vector<std::string_view> members_;
  std::string step_;  // empty: no step yet
  bool padded_ = false;
  std::size_t width_ = 0;
  std::string out_;
};

// Sorted (digits_less), distinct values -> "1-3,5,01-02"; bracketed when more than one.
std::string rangeset_text(const std::vector<std::string_view>& values) {
  RangesetPrinter printer;
  for (std::string_view v : values) printer.add(v);
  std::string out = printer.finish();
  return values.size() > 1 ? "[" + out + "]" : out;
}

std::vector<std::string_view> sorted_distinct(std::vector<std::string_view> v) {
  std::sort(v.begin(), v.end(), [](std::string_view a, std::string_view b) { return digits_less(a, b); });
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// ------------------------------------------------------ several dimensions --

uint64_t mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  return h ^ (h >> 33);
}

// A product of one set of values per dimension (ids: positions in Dimension::values).
struct Vec {
  std::vector<std::vector<uint32_t>> sets;  // ascending ids
  std::vector<uint64_t> hashes;             // hash of each set
  uint64_t size = 1;                        // number of names it stands for
  bool alive = true;
};

uint64_t set_hash(const std::vector<uint32_t>& s) {
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ s.size();
  for (uint32_t v : s) h = mix(h + v);
  return h;
}

struct Dimension {
  std::vector<std::string_view> values;  // distinct, digits_less order (id = position)
  std::vector<uint32_t> plain_rank;      // rank of each id in plain string order
};

enum class Relation { kEqual, kDisjoint, kSubset, kSuperset, kOverlap };

Relation relate(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  std::size_t common = 0;
  for (std::size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] == b[j]) {
      ++common, ++i, ++j;
    } else {
      a[i] < b[j] ? ++i : ++j;
    }
  }
  if (common == 0) return Relation::kDisjoint;
  if (common == a.size() && common == b.size()) return Relation::kEqual;
  if (common == a.size()) return Relation::kSubset;
  if (common == b.size()) return Relation::kSuperset;
  return Relation::kOverlap;
}

constexpr int kNoMerge = -1;

// The dimension along which two vectors merge (ClusterShell's rule: they may
// differ in at most one dimension, there disjoint or nested), or kNoMerge.
int merge_dimension(const Vec& a, const Vec& b) {
  int diff_dim = kNoMerge;
  for (std::size_t d = 0; d < a.sets.size(); ++d) {
    if (a.hashes[d] == b.hashes[d] && a.sets[d] == b.sets[d]) continue;
    if (diff_dim != kNoMerge || relate(a.sets[d], b.sets[d]) == Relation::kOverlap) return kNoMerge;
    diff_dim = static_cast<int>(d);
  }
  return diff_dim == kNoMerge ? 0 : diff_dim;  // identical vectors merge trivially
}

void merge_into(Vec& a, const Vec& b, int d) {
  auto& sa = a.sets[d];
  const auto& sb = b.sets[d];
  Relation r = relate(sa, sb);
  if (r == Relation::kSubset) {
    sa = sb;
  } else if (r == Relation::kDisjoint) {
    std::vector<uint32_t> u;
    u.reserve(sa.size() + sb.size());
    std::merge(sa.begin(), sa.end(), sb.begin(), sb.end(), std::back_inserter(u));
    sa = std::move(u);
  }
  a.hashes[d] = set_hash(sa);
  a.size = 1;
  for (const auto& s : a.sets) a.size *= s.size();
}

class NdFolder {
 public:
  explicit NdFolder(std::vector<Dimension> dims) : dims_(std::move(dims)) {}

  // Runs passes until nothing changes; returns the vectors in final order.
  std::vector<Vec> fold(std::vector<Vec> v) const {
    bool full = false;
    while (true) {
      std::stable_sort(v.begin(), v.end(), [this](const Vec& a, const Vec& b) { return less(a, b); });
      bool changed = full ? full_pass(v) : easy_pass(v);
      if (!changed) {
        if (full) return v;
        full = true;
      }
    }
  }

 private:
  // ClusterShell's vector order: more names first, then per dimension: more
  // values first, then lower first value, then lower last value (as strings).
  bool less(const Vec& a, const Vec& b) const {
    if (a.size != b.size) return a.size > b.size;
    for (std::size_t d = 0; d < dims_.size(); ++d) {
      const auto& sa = a.sets[d];
      const auto& sb = b.sets[d];
      if (sa.size() != sb.size()) return sa.size() > sb.size();
      const auto& rank = dims_[d].plain_rank;
      if (rank[sa.front()] != rank[sb.front()]) return rank[sa.front()] < rank[sb.front()];
      if (rank[sa.back()] != rank[sb.back()]) return rank[sa.back()] < rank[sb.back()];
    }
    return false;
  }

  // Each vector absorbs the vectors right after it while they merge.
  static bool easy_pass(std::vector<Vec>& v) {
    std::vector<Vec> out;
    bool changed = false;
    for (std::size_t i = 0; i < v.size();) {
      Vec cur = std::move(v[i]);
      std::size_t j = i + 1;
      for (int d; j < v.size() && (d = merge_dimension(cur, v[j])) != kNoMerge; ++j) {
        merge_into(cur, v[j], d);
        changed = true;
      }
      out.push_back(std::move(cur));
      i = j;
    }
    v = std::move(out);
    return changed;
  }

  using Buckets = std::vector<std::unordered_map<uint64_t, std::set<uint32_t>>>;

  static uint64_t key_without(const Vec& v, std::size_t skip) {
    uint64_t h = mix(skip + 1);
    for (std::size_t e = 0; e < v.hashes.size(); ++e) {
      if (e != skip) h = mix(h ^ (v.hashes[e] + 0x9e3779b97f4a7c15ULL * (e + 1)));
    }
    return h;
  }

  static void index(Buckets& b, const Vec& v, uint32_t pos, bool insert, std::size_t skip_dim) {
    for (std::size_t d = 0; d < b.size(); ++d) {
      if (d == skip_dim) continue;
      auto& bucket = b[d][key_without(v, d)];
      insert ? (void)bucket.insert(pos) : (void)bucket.erase(pos);
    }
  }

  // The first vector after `after` that merges with v[p], or v.size().
  static std::size_t next_partner(const std::vector<Vec>& v, Buckets& b, std::size_t p, std::size_t after) {
    std::size_t best = v.size();
    for (std::size_t d = 0; d < b.size(); ++d) {
      const auto& bucket = b[d][key_without(v[p], d)];
      for (auto it = bucket.upper_bound(static_cast<uint32_t>(after)); it != bucket.end() && *it < best; ++it) {
        if (merge_dimension(v[p], v[*it]) != kNoMerge) {
          best = *it;
          break;
        }
      }
    }
    return best;
  }

  // Each vector scans every later vector once, merging those that fit.
  static bool full_pass(std::vector<Vec>& v) {
    Buckets b(v.empty() ? 0 : v[0].sets.size());
    for (std::size_t i = 0; i < v.size(); ++i) index(b, v[i], static_cast<uint32_t>(i), true, b.size());
    bool changed = false;
    for (std::size_t p = 0; p < v.size(); ++p) {
      if (!v[p].alive) continue;
      for (std::size_t q = next_partner(v, b, p, p); q < v.size(); q = next_partner(v, b, p, q)) {
        int d = merge_dimension(v[p], v[q]);
        index(b, v[q], static_cast<uint32_t>(q), false, b.size());
        index(b, v[p], static_cast<uint32_t>(p), false, static_cast<std::size_t>(d));
        merge_into(v[p], v[q], d);
        index(b, v[p], static_cast<uint32_t>(p), true, static_cast<std::size_t>(d));
        v[q].alive = false;
        changed = true;
      }
    }
    v.erase(std::remove_if(v.begin(), v.end(), [](const Vec& x) { return !x.alive; }), v.end());
    return changed;
  }

  std::vector<Dimension> dims_;
};

Dimension make_dimension(const PatternGroup& g, std::size_t d) {
  std::vector<std::string_view> all;
  for (std::size_t i = d; i < g.indices.size(); i += g.dims) all.push_back(g.indices[i]);
  Dimension dim;
  dim.values = sorted_distinct(std::move(all));
  std::vector<uint32_t> by_plain(dim.values.size());
  for (uint32_t i = 0; i < by_plain.size(); ++i) by_plain[i] = i;
  std::sort(by_plain.begin(), by_plain.end(), [&](uint32_t a, uint32_t b) { return dim.values[a] < dim.values[b]; });
  dim.plain_rank.resize(by_plain.size());
  for (uint32_t r = 0; r < by_plain.size(); ++r) dim.plain_rank[by_plain[r]] = r;
  return dim;
}

uint32_t id_of(const Dimension& dim, std::string_view value) {
  auto it = std::lower_bound(dim.values.begin(), dim.values.end(), value, digits_less);
  return static_cast<uint32_t>(it - dim.values.begin());
}

Vec make_vec(std::vector<std::vector<uint32_t>> sets) {
  Vec v;
  v.sets = std::move(sets);
  for (const auto& s : v.sets) {
    v.hashes.push_back(set_hash(s));
    v.size *= s.size();
  }
  return v;
}

// The distinct points of a pattern, as ids per dimension.
std::vector<std::vector<uint32_t>> distinct_points(const PatternGroup& g, const std::vector<Dimension>& dims) {
  std::vector<std::vector<uint32_t>> points;
  for (std::size_t i = 0; i < g.indices.size(); i += g.dims) {
    std::vector<uint32_t> p(g.dims);
    for (std::size_t d = 0; d < g.dims; ++d) p[d] = id_of(dims[d], g.indices[i + d]);
    points.push_back(std::move(p));
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  return points;
}

std::vector<Vec> fold_points(const PatternGroup& g, const std::vector<Dimension>& dims) {
  auto points = distinct_points(g, dims);
  uint64_t product = 1;
  for (const auto& dim : dims) {
    product = product > UINT64_MAX / dim.values.size() ? UINT64_MAX : product * dim.values.size();
  }
  if (product == points.size()) {  // a full product folds to one vector
    std::vector<std::vector<uint32_t>> sets;
    for (const auto& dim : dims) {
      sets.emplace_back(dim.values.size());
      for (uint32_t i = 0; i < dim.values.size(); ++i) sets.back()[i] = i;
    }
    return {make_vec(std::move(sets))};
  }
  std::vector<Vec> vecs;
  for (const auto& p : points) {
    std::vector<std::vector<uint32_t>> sets;
    for (uint32_t id : p) sets.push_back({id});
    vecs.push_back(make_vec(std::move(sets)));
  }
  return NdFolder(dims).fold(std::move(vecs));
}

void append_nd(std::vector<std::string>& out, const std::string& pattern, const PatternGroup& g) {
  std::vector<Dimension> dims;
  for (std::size_t d = 0; d < g.dims; ++d) dims.push_back(make_dimension(g, d));
  for (const Vec& v : fold_points(g, dims)) {
    std::vector<std::string> args;
    for (std::size_t d = 0; d < g.dims; ++d) {
      std::vector<std::string_view> values;
      for (uint32_t id : v.sets[d]) values.push_back(dims[d].values[id]);
      args.push_back(rangeset_text(values));
    }
    out.push_back(render(pattern, args));
  }
}

}  // namespace

std::string hostlist_compress_sorted(const std::vector<std::string>& hosts) {
  std::map<std::string, PatternGroup> groups;
  for (const auto& h : hosts) {
    if (!h.empty()) add_name(groups, h);
  }
  std::vector<std::string> parts;
  for (const auto& [pattern, g] : groups) {
    if (g.dims == 0) {
      parts.push_back(render(pattern, {}));
    } else if (g.dims == 1) {
      parts.push_back(render(pattern, {rangeset_text(sorted_distinct(g.indices))}));
    } else {
      append_nd(parts, pattern, g);
    }
  }
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ",") + p;
  return out;
}

}  // namespace drover
