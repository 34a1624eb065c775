// Internal: what each node has free over time during one cycle, and a
// per-class index that answers "earliest time some node of this class can
// hold this much for this long" without looking at every node.
//
// A node's profile is a step function: step i holds the free amounts
// (cores, memory MB, then one count per gres pool of the node) from
// times_[i] until times_[i+1] (the last step lasts forever). It starts at
// the cycle's `now` with what running jobs leave free, and loses capacity
// as the cycle starts jobs and reserves resources for later ones; it never
// gains capacity within a cycle, which is what makes the index's bounds
// and the cycle's caches valid.
#pragma once

#include <algorithm>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

#include "core/cluster.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace drover::core {

inline constexpr Time kNever = kForever;

class NodeProfile {
 public:
  void reset(Time now, const int64_t* capacity, int dims);
  // Start at `now` (>= the first step): what lies before it is forgotten.
  void advance(Time now);
  // A one-dimensional profile that starts at 0 at `now` and changes by the
  // given amounts at the given times (any order; times before now count at now).
  void assign_edges(Time now, std::vector<std::pair<Time, int64_t>>& edges);
  int dims() const { return dims_; }

  // Remove `amount` over [t0, t1) (t1 may be kForever).
  void take(Time t0, Time t1, const int64_t* amount);
  // Earliest t in [from, before) such that free >= need over [t, t + d),
  // or kNever. d may be kForever.
  Time earliest_fit(const int64_t* need, Time d, Time from, Time before) const;
  bool fits(const int64_t* need, Time t0, Time t1) const;
  // t0 when free >= need over [t0, t1); otherwise the end of the first step
  // in it that falls short (kForever for the last): no start in [t0, that
  // end) with t1 - t0 as long can fit either.
  Time fit_or_short_end(const int64_t* need, Time t0, Time t1) const;
  // Free amounts at time t (t >= the first step).
  const int64_t* free_at(Time t) const;
  // Pointwise maximum (minimum) of the free amounts over [b0, b1) into out[dims].
  void max_over(Time b0, Time b1, int64_t* out) const;
  void min_over(Time b0, Time b1, int64_t* out) const;
  // Calls f(t0, t1, free) for each step overlapping [from, before), in order.
  template <class F>
  void for_steps(Time from, Time before, F&& f) const {
    for (size_t j = step_at(std::max(from, times_.front())); j < times_.size() && times_[j] < before; ++j) {
      f(times_[j], j + 1 < times_.size() ? times_[j + 1] : kForever, &free_[j * dims_]);
    }
  }
  // Times at which free capacity grows, in [from, before), ascending.
  void rises(Time from, Time before, std::vector<Time>& out) const;
  size_t steps() const { return times_.size(); }

 private:
  // Index of the step holding t (0 when t is before the first): a
  // branch-free binary search, the hottest loop of a cycle.
  size_t step_at(Time t) const {
    const Time* base = times_.data();
    size_t n = times_.size();
    while (n > 1) {
      size_t half = n / 2;
      base = base[half] <= t ? base + half : base;
      n -= half;
    }
    return static_cast<size_t>(base - times_.data());
  }
  size_t split(Time t);          // make a step start at t; returns its index

  int dims_ = 0;
  std::vector<Time> times_;
  std::vector<int64_t> free_;  // steps() x dims_
};

// Nodes with the same configuration (and so the same per-node need for a
// given job) share one index: an 8-ary tree over the class's nodes whose
// entries hold, for each of kBlocks time blocks covering the planning
// window plus one block for everything after it, the largest free amount
// any node below has at any time in the block. A subtree whose maxima
// cannot hold a job over the blocks its run must cover is skipped.
class ClassIndex {
 public:
  static constexpr int kBlocks = 32;  // + 1 tail block

  // `exhaustive`: no index at all — searches look at every member (small
  // classes, where that is cheaper than building the index each cycle, and
  // the reference search the tests compare the index with).
  void build(const std::vector<NodeIndex>& members, const std::vector<NodeProfile>& profiles, int dims,
             Time now, Time window, Time resolution, bool exhaustive = false);
  bool exhaustive() const { return exhaustive_; }
  // Node `leaf` (position in members) gave `amount` over [t0, t1).
  void update(int leaf, Time t0, Time t1, const int64_t* amount, const std::vector<NodeProfile>& profiles);

  // Earliest start >= from on any member for which accept(member) holds,
  // strictly before `best` (which it lowers), and the member; kNever when
  // none. Starts at or after the window's end are never returned. With
  // `ties`, among members reaching the same earliest time the one with the
  // smallest tie_key(member) wins (ties otherwise go to the first member).
  template <class Accept, class TieKey>
  void earliest(const int64_t* need, Time d, Time from, Time& best, NodeIndex& who, int64_t& who_key,
                const std::vector<NodeProfile>& profiles, Accept&& accept, bool ties, TieKey&& tie_key) const;

  // The same answer found by walking, in time order, the moments at which
  // some member's free capacity grows (a job's earliest start on a node is
  // `from` or such a moment): cheap when an early moment fits, as for small
  // jobs on a busy cluster. Gives up after `max_checks` moments and returns
  // false, leaving `from_out` at the moment reached; true when the answer
  // (possibly none) is final.
  template <class Accept, class TieKey>
  bool earliest_by_rises(const int64_t* need, Time d, Time from, Time& best, NodeIndex& who, int64_t& who_key,
                         const std::vector<NodeProfile>& profiles, Accept&& accept, bool ties, TieKey&& tie_key,
                         int max_checks, Time& from_out) const;

  // Visit members whose index bound allows a start in [from, before), in
  // member order, with that bound; visit returns false to stop. `before`
  // is read at every step, so the visitor may lower it.
  template <class Visit>
  void scan(const int64_t* need, Time d, Time from, const Time& before, Visit&& visit) const;

  const std::vector<NodeIndex>& members() const { return members_; }
  // Work done by searches since build(): index entries bounded, moments checked.
  int64_t visits() const { return visits_; }
  int64_t rise_checks() const { return rise_checks_; }
  Time window_end() const { return window_end_; }

 private:
  // Lower bound of any start >= from under tree entry e, or kNever; a
  // start at or after `before` is not looked for.
  // `need` as cells compare it (NeedCells).
  Time bound(size_t entry, const int32_t* need, Time d, Time from, Time before) const;
  void refresh_leaf(int leaf, int b0, int b1, const std::vector<NodeProfile>& profiles);
  void refresh_parents(size_t leaf, int cell_index, const int32_t* old);
  Time run_end(int j) const {
    return kRunLengths[j] >= kForever ? kForever : now_ + std::max<Time>(kRunLengths[j], 1);
  }
  void refresh_runs(int leaf, Time t0, const std::vector<NodeProfile>& profiles);
  int block_of(Time t) const {
    if (t >= window_end_) return kBlocks;
    if (t <= now_) return 0;
    return static_cast<int>(std::min<Time>((t - now_) / block_len_, kBlocks - 1));
  }
  Time block_start(int b) const { return now_ + static_cast<Time>(b) * block_len_; }
  // Cells of an entry: blocks 0..kBlocks-1, the tail (kBlocks), then for
  // each of kRuns run lengths D the largest "least free over [now, now+D)"
  // of any member below, which bounds a start now tightly (a job running d
  // seconds from now fits only where the least free over [now, now+D) holds
  // it, for the longest D <= d).
  static constexpr int kRuns = 14;
  static constexpr Time kRunLengths[kRuns] = {0,     60,    300,    900,    1800,   3600,   7200,
                                              14400, 28800, 43200, 86400, 172800, 604800, kForever};
  static constexpr int kRunCell = kBlocks + 1;
  static constexpr int kCells = kRunCell + kRuns;
  int32_t* cell(size_t entry, int block) { return &max_[(entry * kCells + block) * dims_]; }
  const int32_t* cell(size_t entry, int block) const { return &max_[(entry * kCells + block) * dims_]; }

  template <class F>
  void dfs(size_t level, size_t pos, F&& f) const;

  std::vector<NodeIndex> members_;
  int dims_ = 0;
  Time now_ = 0, block_len_ = 1, window_end_ = 0;
  std::vector<size_t> level_start_;  // entry index of each level's first node; level 0 = leaves
  std::vector<size_t> level_size_;
  // int32 cells (clamped; see clamp_cell): half the memory of the free
  // amounts themselves, so that a 10,000-node class's cells stay in cache.
  std::vector<int32_t> max_;
  // Moments some member's free capacity grows, bucketed by bf_resolution
  // slot from base_ (in time order across slots, insertion order within
  // one). Each keeps what the member has free at that moment (kept exact
  // as the member gives capacity away), so the walk skips moments that
  // cannot hold a job without reading the profile. May hold moments that
  // are no longer rises.
  struct Rise {
    Time t;
    int leaf;
    uint32_t values;  // offset into rise_free_
    // rise_free_[values + 1] and [values + 2] (memory, the first pool)
    // clamped to int32, INT32_MAX where the class has no such dimension:
    // the walk's filter reads them here, on the line it reads anyway.
    int32_t mem, pool;
  };
  struct LeafRise {
    Time t;
    uint32_t values;
    uint32_t slot, pos;  // rises_[slot][pos]
  };
  void add_rise(Time t, int leaf, const NodeProfile& p);
  // What the walk's filters read of a moment (rise_cores_, Rise::mem and
  // ::pool), from its free amounts f (dims_ of them).
  void carry(uint32_t slot, uint32_t pos, const int64_t* f);
  size_t slot_of(Time t) const { return static_cast<size_t>((t - base_) / slot_len_); }
  static constexpr Time kSlots = 4096;
  Time base_ = 0, slot_len_ = 1;
  std::vector<std::vector<Rise>> rises_;
  // Per slot, parallel to rises_: each moment's free cores (rise_free_'s
  // first value, clamped to int32), contiguous so the walk skips the
  // moments that cannot hold the job several at a time.
  std::vector<std::vector<int32_t>> rise_cores_;
  // Per slot, the most any of its moments had free in each dimension when
  // added (moments only lose capacity later), capped at INT32_MAX (no
  // bound): the walk skips a slot none of whose moments can hold the job.
  std::vector<int32_t> slot_max_;
  std::vector<int64_t> rise_free_;
  std::vector<std::vector<LeafRise>> leaf_rises_;  // per leaf, its moments
  mutable int64_t visits_ = 0, rise_checks_ = 0;
  std::vector<int32_t> old_;
  std::vector<int64_t> scratch_low_, scratch_was_;  // scratch for update()
  // Scratch for earliest_by_rises: per leaf, moments in [from, until)
  // cannot fit the job being searched for (valid where stamp == search_).
  // A search for the same need and duration as the one before keeps them:
  // free capacity only shrinks during a cycle, so what did not fit then
  // does not fit now (array elements and like jobs come in a row).
  // Also on the same line: the member's node, and its tie key as last
  // asked (kNoTie: not asked since the member last changed). The walk's
  // tie key depends only on the member's profile, which changes only with
  // an update() of this leaf (which forgets it) or a new build().
  static constexpr int64_t kNoTie = INT64_MIN;
  struct alignas(32) Blocked {
    Time from = 0, until = 0;
    int64_t tie = kNoTie;
    uint32_t stamp = 0;
    NodeIndex node = -1;  // members_[leaf]
  };
  mutable std::vector<Blocked> blocked_;  // per leaf: the walk reads it for every moment it checks
  mutable uint32_t search_ = 0;
  mutable std::vector<int64_t> search_need_;
  mutable std::vector<int32_t> tiled_need_;  // search_need_ clamped, kBlocks times over
  mutable Time search_d_ = -1;  // -1: none (build() forgets the last search)
  bool exhaustive_ = false;
};

// ---- template bodies ----

// An index cell holds a bound clamped to int32. One at INT32_MAX may stand
// for more: a need clamped the same way is short only where the cell is
// below it, which never rules out a node that could hold the job.
inline int32_t clamp_cell(int64_t v) { return static_cast<int32_t>(std::clamp<int64_t>(v, INT32_MIN, INT32_MAX)); }

// A need clamped as cells are, once per search (on the stack for the usual few dimensions).
class NeedCells {
 public:
  NeedCells(const int64_t* need, int dims) {
    int32_t* out = small_;
    if (static_cast<size_t>(dims) > kSmall) {
      big_.resize(static_cast<size_t>(dims));
      out = big_.data();
    }
    for (int k = 0; k < dims; ++k) out[k] = clamp_cell(need[k]);
    p_ = out;
  }
  NeedCells(const NeedCells&) = delete;
  NeedCells& operator=(const NeedCells&) = delete;
  const int32_t* get() const { return p_; }

 private:
  static constexpr size_t kSmall = 8;
  int32_t small_[kSmall];
  std::vector<int32_t> big_;
  const int32_t* p_ = nullptr;
};

// First i < n with v[i] < below[i], else n; four at a time where SSE2 is there.
inline size_t first_below(const int32_t* v, const int32_t* below, size_t n) {
  size_t i = 0;
#if defined(__SSE2__)
  for (; i + 4 <= n; i += 4) {
    __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(v + i));
    __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(below + i));
    int m = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmplt_epi32(a, b)));
    if (m != 0) return i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(m)));
  }
#endif
  for (; i < n; ++i) {
    if (v[i] < below[i]) return i;
  }
  return n;
}

// First i in [i, n) with v[i] >= x (x > INT32_MIN), else n; four at a time where SSE2 is there.
inline size_t next_at_least(const int32_t* v, size_t i, size_t n, int32_t x) {
#if defined(__SSE2__)
  const __m128i below = _mm_set1_epi32(x - 1);
  for (; i + 4 <= n; i += 4) {
    __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(v + i));
    int m = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpgt_epi32(a, below)));
    if (m != 0) return i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(m)));
  }
#endif
  for (; i < n; ++i) {
    if (v[i] >= x) return i;
  }
  return n;
}

template <class F>
void ClassIndex::dfs(size_t level, size_t pos, F&& f) const {
  // f(level, pos) returns true to descend.
  if (!f(level, pos) || level == 0) return;
  size_t first = pos * 8;
  size_t last = std::min(first + 8, level_size_[level - 1]);
  for (size_t c = first; c < last; ++c) dfs(level - 1, c, f);
}

template <class Accept, class TieKey>
void ClassIndex::earliest(const int64_t* need, Time d, Time from, Time& best, NodeIndex& who, int64_t& who_key,
                          const std::vector<NodeProfile>& profiles, Accept&& accept, bool ties,
                          TieKey&& tie_key) const {
  if (members_.empty()) return;
  if (exhaustive_) {
    Time limit = std::min(ties ? (best == kNever ? kNever : best + 1) : best, window_end_);
    for (NodeIndex n : members_) {
      ++visits_;
      if (!accept(n)) continue;
      Time t = profiles[n].earliest_fit(need, d, std::max(from, now_), limit);
      if (t == kNever) continue;
      if (t < best) {
        best = t;
        who = n;
        who_key = ties ? tie_key(n) : 0;
        limit = std::min(ties ? best + 1 : best, window_end_);
      } else if (ties && t == best) {
        int64_t k = tie_key(n);
        if (k < who_key) {
          who = n;
          who_key = k;
        }
      }
    }
    return;
  }
  const NeedCells need_cells(need, dims_);
  size_t top = level_start_.size() - 1;
  dfs(top, 0, [&](size_t level, size_t pos) {
    ++visits_;
    // Leaves are answered exactly from their profile; their cells bound nothing more.
    Time lb = from;
    if (level > 0 || level_start_.size() == 1) {
      lb = bound(level_start_[level] + pos, need_cells.get(), d, from, ties && best < kNever ? best + 1 : best);
      if (lb == kNever || lb > best || (lb == best && !ties)) return false;
      if (level > 0) return true;
    }
    NodeIndex n = members_[pos];
    if (!accept(n)) return false;
    Time limit = ties ? (best == kNever ? kNever : best + 1) : best;
    limit = std::min(limit, window_end_);
    Time t = profiles[n].earliest_fit(need, d, lb, limit);
    if (t == kNever) return false;
    if (t < best) {
      best = t;
      who = n;
      who_key = ties ? tie_key(n) : 0;
    } else if (ties && t == best) {
      int64_t k = tie_key(n);
      if (k < who_key) {
        who = n;
        who_key = k;
      }
    }
    return false;
  });
}

template <class Accept, class TieKey>
bool ClassIndex::earliest_by_rises(const int64_t* need, Time d, Time from, Time& best, NodeIndex& who,
                                   int64_t& who_key, const std::vector<NodeProfile>& profiles, Accept&& accept,
                                   bool ties, TieKey&& tie_key, int max_checks, Time& from_out) const {
  from_out = from;
  if (exhaustive_) return false;
  if (members_.empty()) return true;
  const NeedCells need_cells(need, dims_);
  Time lb = bound(level_start_.back(), need_cells.get(), d, from, ties && best < kNever ? best + 1 : best);
  if (lb == kNever || lb > best || (lb == best && !ties)) return true;
  Time limit = std::min(ties && best < kNever ? best + 1 : best, window_end_);
  Time found = kNever;
  size_t found_leaf = 0;  // who's position among the members, when this walk chose it
  bool who_mine = false;
  int checks = 0;
  if (blocked_.size() != members_.size()) {  // (build() clears it)
    blocked_.assign(members_.size(), Blocked{});
    for (size_t i = 0; i < members_.size(); ++i) blocked_[i].node = members_[i];
    search_ = 0;
    search_d_ = -1;
  }
  const bool same_search = search_d_ == d && search_need_.size() == static_cast<size_t>(dims_) &&
                           std::equal(need, need + dims_, search_need_.begin());
  if (!same_search) {
    if (++search_ == 0) {
      for (Blocked& b : blocked_) b.stamp = 0;
      search_ = 1;
    }
    search_need_.assign(need, need + dims_);
    search_d_ = d;
    // The need once per block, as a leaf's block cells lie (block after
    // block, dims_ values each): one elementwise comparison finds the
    // first block that falls short.
    tiled_need_.resize(static_cast<size_t>(kBlocks) * static_cast<size_t>(dims_));
    for (size_t i = 0; i < tiled_need_.size(); ++i) tiled_need_[i] = clamp_cell(need[i % static_cast<size_t>(dims_)]);
  }
  // The clamped cores filter only skips moments that cannot hold the job;
  // the full check below decides.
  const int32_t need_cores = static_cast<int32_t>(std::clamp<int64_t>(need[0], INT32_MIN + 1, INT32_MAX));
  const int32_t need_mem = dims_ > 1 ? clamp_cell(need[1]) : INT32_MIN;
  const int32_t need_pool = dims_ > 2 ? clamp_cell(need[2]) : INT32_MIN;
  for (size_t slot = slot_of(std::max(lb, base_)); slot < rises_.size() && found == kNever; ++slot) {
    if (base_ + static_cast<Time>(slot) * slot_len_ >= limit) break;
    if (rises_[slot].empty()) continue;
    {
      const int32_t* most = &slot_max_[slot * static_cast<size_t>(dims_)];
      bool may = true;
      for (int k = 0; k < dims_ && may; ++k) may = most[k] == INT32_MAX || most[k] >= need[k];
      if (!may) continue;
    }
    const std::vector<Rise>& in_slot = rises_[slot];
    const int32_t* cores = rise_cores_[slot].data();
    const size_t count = in_slot.size();
    for (size_t i = next_at_least(cores, 0, count, need_cores); i < count;
         i = next_at_least(cores, i + 1, count, need_cores)) {
      const Rise& r = in_slot[i];
      Time t = r.t;
      if (t < lb || t >= limit || (found != kNever && t > found)) continue;
      if (r.mem < need_mem || r.pool < need_pool) continue;
      if (dims_ > 3 || cores[i] == INT32_MAX || r.mem == INT32_MAX || (dims_ > 2 && r.pool == INT32_MAX)) {
        // More pools than the moment carries, or an amount past int32: the exact amounts.
        const int64_t* cap = &rise_free_[r.values];
        bool may = true;
        for (int k = 0; k < dims_ && may; ++k) may = cap[k] >= need[k];
        if (!may) continue;
      }
      const size_t leaf = static_cast<size_t>(r.leaf);
      // A moment of a member, no earlier than one of its moments that fell
      // short, and before the end of the step that fell short (which this
      // moment's run covers too): known not to fit.
      Blocked& known = blocked_[leaf];
      if (known.stamp == search_ && t >= known.from && t < known.until) continue;
      ++rise_checks_;
      if (++checks > max_checks) {
        from_out = t;
        return false;
      }
      NodeIndex n = known.node;
      if (!accept(n)) continue;
      // A moment at the best start so far matters only if its member would
      // win the tie: ask that first, it is cheaper than whether the job fits.
      auto tie_of = [&] { return known.tie != kNoTie ? known.tie : (known.tie = tie_key(n)); };
      int64_t k = 0;
      if (ties && t == best) {
        k = tie_of();
        if (!(who_mine ? k < who_key || (k == who_key && leaf < found_leaf) : k < who_key)) continue;
      }
      const Time run_end = d >= kForever - t ? kForever : t + d;
      // A block wholly inside the run whose most free falls short rules out
      // this moment, and every start up to that block's beginning, without
      // reading the profile (the leaf's cells are one short row).
      {
        const int b_first = block_of(t) + 1;
        const int b_last = run_end >= kForever
                               ? kBlocks - 1
                               : static_cast<int>(std::min<Time>(kBlocks - 1, (run_end - now_) / block_len_ - 1));
        if (b_first <= b_last) {
          const size_t span = static_cast<size_t>(b_last - b_first + 1) * static_cast<size_t>(dims_);
          const size_t at = static_cast<size_t>(b_first) * static_cast<size_t>(dims_);
          const size_t j = first_below(cell(leaf, b_first), tiled_need_.data() + at, span);
          if (j < span) {
            const int b = b_first + static_cast<int>(j / static_cast<size_t>(dims_));
            known.from = t;
            known.until = block_start(b) + 1;
            known.stamp = search_;
            continue;
          }
        }
      }
      Time end = profiles[n].fit_or_short_end(need, t, run_end);
      if (end > t) {
        known.from = t;
        known.until = end;
        known.stamp = search_;
        continue;
      }
      // Moments of one time come in no particular member order: among
      // equal starts (and, with ties, equal keys) the first member wins, as
      // in the tree search and the plain one; an earlier class's pick is
      // replaced only by a sooner start (or, with ties, a smaller key).
      if (found == kNever || t < found) found = t;
      if (ties && t < best) k = tie_of();
      bool take = t < best;
      if (!take && t == best) {
        take = who_mine ? (ties && k < who_key) || (k == who_key && leaf < found_leaf) : ties && k < who_key;
      }
      if (take) {
        best = t;
        who = n;
        who_key = k;
        found_leaf = leaf;
        who_mine = true;
      }
    }
  }
  return true;
}

template <class Visit>
void ClassIndex::scan(const int64_t* need, Time d, Time from, const Time& before, Visit&& visit) const {
  if (members_.empty()) return;
  if (exhaustive_) {
    Time from_now = std::max(from, now_);
    for (size_t pos = 0; pos < members_.size(); ++pos) {
      ++visits_;
      if (from_now >= before || from_now >= window_end_) return;
      if (!visit(static_cast<int>(pos), members_[pos], from_now)) return;
    }
    return;
  }
  const NeedCells need_cells(need, dims_);
  bool go = true;
  size_t top = level_start_.size() - 1;
  dfs(top, 0, [&](size_t level, size_t pos) {
    if (!go) return false;
    ++visits_;
    Time lb = from;
    if (level > 0 || level_start_.size() == 1) {
      lb = bound(level_start_[level] + pos, need_cells.get(), d, from, before);
      if (lb == kNever || lb >= before) return false;
      if (level > 0) return true;
    }
    go = visit(static_cast<int>(pos), members_[pos], lb);
    return false;
  });
}

}  // namespace drover::core
