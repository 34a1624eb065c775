#include "core/profile.hpp"

#include <algorithm>
#include <bit>

namespace drover::core {

namespace {

Time end_of(Time t, Time d) { return d >= kForever - t ? kForever : t + d; }

// Free amounts (int64) against a need, or index cells (int32) against a clamped need.
template <class T>
bool covers(const T* free, const T* need, int dims) {
  for (int k = 0; k < dims; ++k) {
    if (free[k] < need[k]) return false;
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------- NodeProfile

void NodeProfile::reset(Time now, const int64_t* capacity, int dims) {
  dims_ = dims;
  times_.assign(1, now);
  free_.assign(capacity, capacity + dims);
}

void NodeProfile::advance(Time now) {
  if (times_.empty() || now <= times_.front()) return;
  size_t i = step_at(now);
  if (i > 0) {
    times_.erase(times_.begin(), times_.begin() + static_cast<std::ptrdiff_t>(i));
    free_.erase(free_.begin(), free_.begin() + static_cast<std::ptrdiff_t>(i * static_cast<size_t>(dims_)));
  }
  times_.front() = now;
}

void NodeProfile::assign_edges(Time now, std::vector<std::pair<Time, int64_t>>& edges) {
  dims_ = 1;
  for (auto& e : edges) e.first = std::max(e.first, now);
  std::sort(edges.begin(), edges.end());
  times_.assign(1, now);
  free_.assign(1, 0);
  for (const auto& [t, delta] : edges) {
    if (t != times_.back()) {
      times_.push_back(t);
      free_.push_back(free_.back());
    }
    free_.back() += delta;
  }
}


size_t NodeProfile::split(Time t) {
  size_t i = step_at(t);
  if (times_[i] == t || t < times_[i]) return i;  // already a step (or before the first: nothing to take there)
  if (i + 1 == times_.size()) {
    // After the last step (a job ending later than any other): append.
    times_.push_back(t);
    const size_t at = i * static_cast<size_t>(dims_);
    for (int k = 0; k < dims_; ++k) {
      const int64_t v = free_[at + k];  // a copy: push_back may move the storage
      free_.push_back(v);
    }
    return i + 1;
  }
  times_.insert(times_.begin() + static_cast<std::ptrdiff_t>(i + 1), t);
  // The new step starts with its predecessor's amounts.
  size_t at = (i + 1) * static_cast<size_t>(dims_);
  free_.insert(free_.begin() + static_cast<std::ptrdiff_t>(at), static_cast<size_t>(dims_), 0);
  for (int k = 0; k < dims_; ++k) free_[at + k] = free_[at - dims_ + k];
  return i + 1;
}

void NodeProfile::take(Time t0, Time t1, const int64_t* amount) {
  if (t1 <= t0) return;
  t0 = std::max(t0, times_.front());
  size_t a = split(t0);
  size_t b = t1 >= kForever ? times_.size() : split(t1);
  for (size_t i = a; i < b; ++i) {
    int64_t* f = &free_[i * dims_];
    for (int k = 0; k < dims_; ++k) f[k] -= amount[k];
  }
  // A uniform cut keeps the steps inside [t0, t1) distinct from each
  // other; only its two edges can now equal their neighbours: merge them
  // (keeps profiles short). The later edge first, so `a` stays valid.
  auto merge_with_previous = [&](size_t i) {
    if (i == 0 || i >= times_.size()) return;
    for (int k = 0; k < dims_; ++k) {
      if (free_[i * dims_ + k] != free_[(i - 1) * dims_ + k]) return;
    }
    times_.erase(times_.begin() + static_cast<std::ptrdiff_t>(i));
    free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(i * dims_),
                free_.begin() + static_cast<std::ptrdiff_t>((i + 1) * dims_));
  };
  merge_with_previous(b);
  merge_with_previous(a);
}

Time NodeProfile::earliest_fit(const int64_t* need, Time d, Time from, Time before) const {
  from = std::max(from, times_.front());
  size_t i = step_at(from);
  Time cand = from;
  while (cand < before) {
    Time stop = end_of(cand, d);
    size_t j = i;
    bool ok = true;
    for (; j < times_.size() && times_[j] < stop; ++j) {
      if (!covers(&free_[j * dims_], need, dims_)) {
        ok = false;
        break;
      }
    }
    if (ok) return cand;
    if (j + 1 >= times_.size()) return kNever;  // the last step lasts forever and does not fit
    i = j + 1;
    cand = times_[i];
  }
  return kNever;
}

bool NodeProfile::fits(const int64_t* need, Time t0, Time t1) const {
  for (size_t j = step_at(std::max(t0, times_.front())); j < times_.size() && times_[j] < t1; ++j) {
    if (!covers(&free_[j * dims_], need, dims_)) return false;
  }
  return true;
}

Time NodeProfile::fit_or_short_end(const int64_t* need, Time t0, Time t1) const {
  for (size_t j = step_at(std::max(t0, times_.front())); j < times_.size() && times_[j] < t1; ++j) {
    if (!covers(&free_[j * dims_], need, dims_)) return j + 1 < times_.size() ? times_[j + 1] : kForever;
  }
  return t0;
}

const int64_t* NodeProfile::free_at(Time t) const { return &free_[step_at(t) * dims_]; }

void NodeProfile::max_over(Time b0, Time b1, int64_t* out) const {
  std::fill(out, out + dims_, INT64_MIN);
  for (size_t j = step_at(std::max(b0, times_.front())); j < times_.size() && times_[j] < b1; ++j) {
    const int64_t* f = &free_[j * dims_];
    for (int k = 0; k < dims_; ++k) out[k] = std::max(out[k], f[k]);
  }
}

void NodeProfile::min_over(Time b0, Time b1, int64_t* out) const {
  std::fill(out, out + dims_, INT64_MAX);
  size_t j = step_at(std::max(b0, times_.front()));
  do {
    const int64_t* f = &free_[j * dims_];
    for (int k = 0; k < dims_; ++k) out[k] = std::min(out[k], f[k]);
    ++j;
  } while (j < times_.size() && times_[j] < b1);
}

void NodeProfile::rises(Time from, Time before, std::vector<Time>& out) const {
  for (size_t j = 1; j < times_.size(); ++j) {
    if (times_[j] < from) continue;
    if (times_[j] >= before) break;
    const int64_t* prev = &free_[(j - 1) * dims_];
    const int64_t* cur = &free_[j * dims_];
    for (int k = 0; k < dims_; ++k) {
      if (cur[k] > prev[k]) {
        out.push_back(times_[j]);
        break;
      }
    }
  }
}

// ----------------------------------------------------------------- ClassIndex


void ClassIndex::build(const std::vector<NodeIndex>& members, const std::vector<NodeProfile>& profiles, int dims,
                       Time now, Time window, Time resolution, bool exhaustive) {
  exhaustive_ = exhaustive;
  members_ = members;
  blocked_.clear();  // the walk sets it up again for these members
  dims_ = dims;
  now_ = now;
  block_len_ = std::max<Time>(1, (window + kBlocks - 1) / kBlocks);
  window_end_ = now_ + window;
  visits_ = rise_checks_ = 0;
  search_d_ = -1;  // what earlier cycles' searches learnt is not kept
  if (exhaustive_) return;  // searches look at every member directly
  level_start_.clear();
  level_size_.clear();
  size_t n = members_.size(), total = 0;
  while (true) {
    level_start_.push_back(total);
    level_size_.push_back(n);
    total += n;
    if (n <= 1) break;
    n = (n + 7) / 8;
  }
  max_.assign(total * kCells * dims_, INT32_MIN);
  visits_ = rise_checks_ = 0;
  // Slots of bf_resolution over the window, at most kSlots of them (moments
  // within one slot are compared by their own times).
  slot_len_ = std::max<Time>({1, resolution, (window + kSlots - 1) / kSlots});
  base_ = now_ / slot_len_ * slot_len_;
  for (auto& v : rises_) v.clear();
  for (auto& v : rise_cores_) v.clear();
  rises_.resize(static_cast<size_t>((window_end_ - base_) / slot_len_ + 1));
  rise_cores_.resize(rises_.size());
  slot_max_.assign(rises_.size() * static_cast<size_t>(dims_), INT32_MIN);
  rise_free_.clear();
  leaf_rises_.resize(members_.size());
  for (auto& v : leaf_rises_) v.clear();
  std::vector<Time> times;
  for (size_t leaf = 0; leaf < members_.size(); ++leaf) {
    refresh_leaf(static_cast<int>(leaf), 0, kBlocks, profiles);
    refresh_runs(static_cast<int>(leaf), now_, profiles);
    const NodeProfile& p = profiles[members_[leaf]];
    times.clear();
    profiles[members_[leaf]].rises(now_ + 1, window_end_, times);
    for (Time t : times) add_rise(t, static_cast<int>(leaf), p);
  }
  for (size_t level = 1; level < level_start_.size(); ++level) {
    for (size_t pos = 0; pos < level_size_[level]; ++pos) {
      size_t e = level_start_[level] + pos;
      size_t first = pos * 8, last = std::min(first + 8, level_size_[level - 1]);
      for (int b = 0; b < kCells; ++b) {
        int32_t* out = cell(e, b);
        for (size_t c = first; c < last; ++c) {
          const int32_t* in = cell(level_start_[level - 1] + c, b);
          for (int k = 0; k < dims_; ++k) out[k] = std::max(out[k], in[k]);
        }
      }
    }
  }
}

// Block maxima b0..b1 of one leaf, in one pass over the steps they cover.
void ClassIndex::refresh_leaf(int leaf, int b0, int b1, const std::vector<NodeProfile>& profiles) {
  const NodeProfile& p = profiles[members_[leaf]];
  for (int b = b0; b <= b1; ++b) {
    int32_t* out = cell(static_cast<size_t>(leaf), b);
    std::fill(out, out + dims_, INT32_MIN);
  }
  Time start = block_start(b0);
  Time stop = b1 == kBlocks ? kForever : block_start(b1 + 1);
  p.for_steps(start, stop, [&](Time t0, Time t1, const int64_t* f) {
    int first = std::max(b0, block_of(t0));
    int last = std::min(b1, t1 >= kForever ? kBlocks : block_of(t1 - 1));
    for (int b = first; b <= last; ++b) {
      int32_t* out = cell(static_cast<size_t>(leaf), b);
      for (int k = 0; k < dims_; ++k) out[k] = std::max(out[k], clamp_cell(f[k]));
    }
  });
}

// Least free over [now, now + D) for the run lengths that end after t0, in one pass.
void ClassIndex::refresh_runs(int leaf, Time t0, const std::vector<NodeProfile>& profiles) {
  const NodeProfile& p = profiles[members_[leaf]];
  int first = 0;
  while (first < kRuns && run_end(first) <= t0) ++first;
  if (first == kRuns) return;
  std::vector<int64_t>& low = scratch_low_;
  low.assign(static_cast<size_t>(dims_), INT64_MAX);
  int j = 0;
  auto close_runs_until = [&](Time upto) {
    for (; j < kRuns && run_end(j) <= upto; ++j) {
      if (j >= first) std::transform(low.begin(), low.end(), cell(static_cast<size_t>(leaf), kRunCell + j), clamp_cell);
    }
  };
  p.for_steps(now_, kForever, [&](Time s0, Time, const int64_t* f) {
    if (s0 > now_) close_runs_until(s0);  // runs ending at or before this step do not include it
    for (int k = 0; k < dims_; ++k) low[static_cast<size_t>(k)] = std::min(low[static_cast<size_t>(k)], f[k]);
  });
  close_runs_until(kForever);
}

void ClassIndex::refresh_parents(size_t leaf, int cell_index, const int32_t* old) {
  // Free amounts only shrink within a cycle: a parent changes only where
  // the child's old value was the parent's (the child held the maximum);
  // then it is recomputed from its children.
  std::vector<int64_t>& was = scratch_was_;
  was.assign(old, old + dims_);
  size_t pos = leaf;
  for (size_t level = 1; level < level_start_.size(); ++level) {
    pos /= 8;
    int32_t* out = cell(level_start_[level] + pos, cell_index);
    size_t first = pos * 8, last = std::min(first + 8, level_size_[level - 1]);
    bool changed = false;
    for (int k = 0; k < dims_; ++k) {
      int64_t before = out[k];
      int64_t& w = was[static_cast<size_t>(k)];
      if (w < before) {
        w = INT64_MIN;  // the child was below the maximum: nothing changes from here up
        continue;
      }
      int32_t m = INT32_MIN;
      for (size_t c = first; c < last; ++c) m = std::max(m, cell(level_start_[level - 1] + c, cell_index)[k]);
      out[k] = m;
      w = m == before ? INT64_MIN : before;
      changed = changed || m != before;
    }
    if (!changed) return;
  }
}

void ClassIndex::update(int leaf, Time t0, Time t1, const int64_t* amount,
                        const std::vector<NodeProfile>& profiles) {
  if (exhaustive_) return;
  if (static_cast<size_t>(leaf) < blocked_.size()) blocked_[static_cast<size_t>(leaf)].tie = kNoTie;
  for (const LeafRise& lr : leaf_rises_[static_cast<size_t>(leaf)]) {
    if (lr.t < t0 || lr.t >= t1) continue;
    for (int k = 0; k < dims_; ++k) rise_free_[lr.values + k] -= amount[k];
    carry(lr.slot, lr.pos, &rise_free_[lr.values]);
  }
  int b0 = block_of(t0);
  int b1 = t1 >= kForever ? kBlocks : block_of(t1 - 1);
  // The leaf's old cells: a parent changes only where the leaf held its maximum.
  const int32_t* mine = cell(static_cast<size_t>(leaf), 0);
  old_.assign(mine, mine + kCells * dims_);
  refresh_leaf(leaf, b0, b1, profiles);
  refresh_runs(leaf, t0, profiles);
  for (int c = b0; c < kCells; ++c) {
    if (c > b1 && c < kRunCell) continue;
    const int32_t* now_cell = cell(static_cast<size_t>(leaf), c);
    const int32_t* was = &old_[static_cast<size_t>(c * dims_)];
    bool same = true;
    for (int k = 0; k < dims_ && same; ++k) same = was[k] == now_cell[k];
    if (same) continue;
    refresh_parents(static_cast<size_t>(leaf), c, was);
  }
  if (t1 < window_end_) add_rise(t1, leaf, profiles[members_[leaf]]);
}

void ClassIndex::add_rise(Time t, int leaf, const NodeProfile& p) {
  if (t < base_ || t >= window_end_) return;
  const int64_t* f = p.free_at(t);
  auto values = static_cast<uint32_t>(rise_free_.size());
  const size_t slot = slot_of(t);
  auto pos = static_cast<uint32_t>(rises_[slot].size());
  rises_[slot].push_back(Rise{t, leaf, values, INT32_MAX, INT32_MAX});
  rise_cores_[slot].push_back(0);
  carry(static_cast<uint32_t>(slot), pos, f);
  leaf_rises_[static_cast<size_t>(leaf)].push_back({t, values, static_cast<uint32_t>(slot), pos});
  rise_free_.insert(rise_free_.end(), f, f + dims_);
  int32_t* most = &slot_max_[slot * static_cast<size_t>(dims_)];
  for (int k = 0; k < dims_; ++k) {
    most[k] = std::max(most[k], static_cast<int32_t>(std::min<int64_t>(f[k], INT32_MAX)));
  }
}

void ClassIndex::carry(uint32_t slot, uint32_t pos, const int64_t* f) {
  rise_cores_[slot][pos] = clamp_cell(f[0]);
  Rise& r = rises_[slot][pos];
  if (dims_ > 1) r.mem = clamp_cell(f[1]);
  if (dims_ > 2) r.pool = clamp_cell(f[2]);
}

Time ClassIndex::bound(size_t entry, const int32_t* need, Time d, Time from, Time before) const {
  if (exhaustive_) {
    Time t = std::max(from, now_);
    return t >= window_end_ || t >= before ? kNever : t;
  }
  // A run starting in block b covers blocks b .. b + span (a start inside
  // block b runs past the start of every block up to b + span).
  int span = d >= kForever ? kBlocks : static_cast<int>(std::min<Time>(kBlocks, (std::max<Time>(d, 1) - 1) / block_len_));
  if (from <= now_) {
    // A start now: the least free over the longest run length within d, then blocks 0 .. span.
    int j = 0;
    while (j + 1 < kRuns && kRunLengths[j + 1] <= d) ++j;
    bool ok = covers(cell(entry, kRunCell + j), need, dims_);
    for (int b = 0; ok && b <= std::min(span, kBlocks); ++b) ok = covers(cell(entry, b), need, dims_);
    if (ok) return now_;
    if (before <= now_ + 1) return kNever;
    from = now_ + 1;
  }
  int run = 0;
  for (int b = block_of(from); b <= kBlocks; ++b) {
    if (!covers(cell(entry, b), need, dims_)) {
      run = 0;
      continue;
    }
    ++run;
    // The tail lasts forever: a run that reaches it is long enough.
    if (run > span || b == kBlocks) {
      int start = b - run + 1;
      if (start >= kBlocks) return kNever;  // beyond the planning window
      Time t = std::max(from, block_start(start));
      return t >= before ? kNever : t;
    }
  }
  return kNever;
}

}  // namespace drover::core
