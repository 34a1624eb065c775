// Where and when a job can run: now (start_now), or the earliest time
// within the planning window (plan_later), over the node classes a
// partition choice allows, in the job's preference order.
#include <algorithm>
#include <vector>

#include "core/cycle.hpp"

namespace drover::core {

namespace {

std::vector<int64_t> amount_of(const NodeNeed& n) {
  std::vector<int64_t> a;
  a.reserve(2 + n.pool.size());
  a.push_back(n.cores);
  a.push_back(n.mem_mb);
  for (int32_t p : n.pool) a.push_back(p);
  return a;
}

bool needs_filter(const Demand& d) { return !d.required.empty() || !d.excluded.empty(); }

// Would taking `amount` now leave free GPUs on the node with no free core
// or no free memory to use them?
bool strands(const NodeClass& cls, const NodeProfile& p, Time now, const std::vector<int64_t>& amount) {
  if (!cls.has_gpus) return false;
  const int64_t* f = p.free_at(now);
  int64_t gpus_left = 0;
  for (size_t k = 0; k < cls.spec->gres.size(); ++k) {
    if (cls.spec->gres[k].name == "gpu") gpus_left += f[2 + k] - amount[2 + k];
  }
  if (gpus_left <= 0) return false;
  return f[0] - amount[0] <= 0 || f[1] - amount[1] <= 0;
}

// Moments the rise walk checks before the tree search takes over.
constexpr int kRiseChecks = 4096;

struct Cand {
  Time start;
  int64_t key;   // preference among equal starts (lower first)
  int64_t rank;  // class position and member order
  NodeIndex node;
  bool operator<(const Cand& o) const {
    if (start != o.start) return start < o.start;
    if (key != o.key) return key < o.key;
    return rank < o.rank;
  }
};

}  // namespace

uint64_t Frontier::key(int32_t cls, const std::vector<int64_t>& need, Time d, int32_t nodes) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v) {
    h ^= v;
    h *= 1099511628211ull;
  };
  mix(static_cast<uint64_t>(cls));
  mix(static_cast<uint64_t>(nodes));
  mix(static_cast<uint64_t>(d));
  for (int64_t v : need) mix(static_cast<uint64_t>(v));
  return h;
}

Time Frontier::lower_bound(int32_t cls, const std::vector<int64_t>& need, Time d, int32_t nodes) const {
  Time lb = 0;
  if (off_) return lb;
  auto it = exact_.find(key(cls, need, d, nodes));
  if (it != exact_.end()) {
    for (const FrontierPoint& p : it->second) {
      if (p.d == d && p.nodes == nodes && p.need == need) lb = std::max(lb, p.at);
    }
  }
  const Recent& recent = recent_[static_cast<size_t>(cls)];
  if (recent.dims != need.size()) return lb;
  for (size_t i = 0; i < recent.used; ++i) {
    if (recent.at[i] <= lb || recent.d[i] > d || recent.nodes[i] > nodes) continue;
    const int64_t* p = &recent.need[i * recent.dims];
    bool covered = true;
    for (size_t k = 0; k < need.size() && covered; ++k) covered = p[k] <= need[k];
    if (covered) lb = recent.at[i];
  }
  return lb;
}

void Frontier::learn(int32_t cls, const std::vector<int64_t>& need, Time d, int32_t nodes, Time at) {
  if (off_) return;
  std::vector<FrontierPoint>& same = exact_[key(cls, need, d, nodes)];
  bool found = false;
  for (FrontierPoint& p : same) {
    if (p.d == d && p.nodes == nodes && p.need == need) {
      p.at = std::max(p.at, at);
      found = true;
    }
  }
  if (!found) same.push_back(FrontierPoint{need, d, nodes, at});
  Recent& r = recent_[static_cast<size_t>(cls)];
  if (r.used == 0) {
    r.dims = need.size();
    r.need.resize(kRecent * r.dims);  // the storage is kept from cycle to cycle
  }
  if (need.size() != r.dims) return;  // (a class's needs all have its dimensions)
  size_t slot = r.used;
  if (r.used == kRecent) {
    slot = r.next;
    r.next = (r.next + 1) % kRecent;
  } else {
    ++r.used;
  }
  std::copy(need.begin(), need.end(), r.need.begin() + static_cast<std::ptrdiff_t>(slot * r.dims));
  r.d[slot] = d;
  r.nodes[slot] = nodes;
  r.at[slot] = at;
}

Time Scheduler::Impl::duration(const PartChoice& pc) {
  Seconds t = pc.demand.time_limit;
  return t >= kForever || t <= 0 ? kForever : t;
}

// ---------------------------------------------------------------- start now

namespace {

struct SearchCtx {
  Scheduler::Impl& s;
  const PartChoice& pc;
  size_t alt;
  Time d;
  Time not_before = 0;  // plans start no earlier (FCFS: behind the first waiting job)
  const JobSpec* job = nullptr;
  bool start_now = false;  // a search for a start now (else for a plan)
  // Some nodes the job's class allows may still not take it: -w/-x, user
  // exclusivity, or nodes a waiting -w job closed (then what one search
  // learns is not for other jobs).
  bool filtered() const { return needs_filter(pc.demand) || !s.node_users.empty() || (start_now && s.any_closed); }
  // Another user's job holds node n, now or (for a start now) over the job's
  // run, which user exclusivity forbids sharing with.
  bool user_blocked(NodeIndex n) const {
    const Time from = std::max(s.now, not_before);
    const Time to = start_now ? sat_add(s.now, d) : from + 1;
    return s.user_blocked_until(n, *job, pc.partition, from, to) > 0;
  }
  bool eligible(NodeIndex n) const {
    if (s.held_off != 0 && s.held_off_mark[static_cast<size_t>(n)] == s.held_off) return false;
    if (start_now && s.any_closed && s.closed_now[static_cast<size_t>(n)]) return false;
    if (!s.node_users.empty() && job && user_blocked(n)) return false;
    return !needs_filter(pc.demand) || node_eligible(pc.demand, s.c, n, alt);
  }
};

// The second pass (stranding GPUs allowed) matters only when a class has GPUs.
bool any_gpus(const SearchCtx& x, const std::vector<ClassNeed>& classes) {
  return std::any_of(classes.begin(), classes.end(), [&](const ClassNeed& cn) { return x.s.classes[cn.cls].has_gpus; });
}

std::optional<Placement> single_now(SearchCtx& x, const std::vector<ClassNeed>& classes, int32_t tasks,
                                    const std::vector<std::vector<int64_t>>* amounts) {
  int passes = any_gpus(x, classes) ? 2 : 1;
  for (int pass = 0; pass < passes; ++pass) {
    for (size_t i = 0; i < classes.size(); ++i) {
      const ClassNeed& cn = classes[i];
      const std::vector<int64_t>& amount = amounts ? (*amounts)[i] : cn.amount;
      if (amounts && amount.empty()) continue;
      // Learnt this cycle: a job needing no more than this could not start now
      // here; or no node of the class is idle long enough for a job taking all its cores.
      if (x.s.frontier.lower_bound(cn.cls, amount, x.d, 1) > x.s.now) continue;
      if (!amounts && !x.s.idle_now(cn, 1, x.d)) continue;
      const NodeClass& cls = x.s.classes[cn.cls];
      Time best = x.s.now + 1;
      NodeIndex who = -1;
      int64_t key = 0;
      x.s.idx(cn.cls).earliest(
          amount.data(), x.d, x.s.now, best, who, key, x.s.prof,
          [&](NodeIndex n) { return x.eligible(n) && (pass == 1 || !strands(cls, x.s.prof[n], x.s.now, amount)); },
          false, [](NodeIndex) { return int64_t{0}; });
      if (who < 0 && pass == passes - 1 && !x.filtered()) {
        x.s.frontier.learn(cn.cls, amount, x.d, 1, x.s.now + 1);
      }
      if (who >= 0) {
        Placement p;
        p.start = x.s.now;
        p.add(who, tasks, amount);
        return p;
      }
    }
  }
  return std::nullopt;
}

std::optional<Placement> multi_now(SearchCtx& x, const std::vector<ClassNeed>& classes, int32_t k,
                                   int32_t tpn, int32_t tasks) {
  // Quick "no": not enough idle nodes now (jobs taking whole nodes' cores),
  // or learnt this cycle that a job needing no more could not start now.
  bool single = classes.size() == 1 && !x.filtered();
  if (single && (x.s.frontier.lower_bound(classes[0].cls, classes[0].amount, x.d, k) > x.s.now ||
                 !x.s.idle_now(classes[0], k, x.d))) {
    return std::nullopt;
  }
  int passes = any_gpus(x, classes) ? 2 : 1;
  for (int pass = 0; pass < passes; ++pass) {
    Placement p;
    p.start = x.s.now;
    Time before = x.s.now + 1;
    for (const ClassNeed& cn : classes) {
      const NodeClass& cls = x.s.classes[cn.cls];
      x.s.idx(cn.cls).scan(cn.amount.data(), x.d, x.s.now, before, [&](int, NodeIndex n, Time) {
        if (!x.eligible(n)) return true;
        const NodeProfile& prof = x.s.prof[n];
        if (!prof.fits(cn.amount.data(), x.s.now, x.s.now + x.d)) return true;
        if (pass == 0 && strands(cls, prof, x.s.now, cn.amount)) return true;
        p.add(n, 0, cn.amount);
        return static_cast<int32_t>(p.nodes.size()) < k;
      });
      if (static_cast<int32_t>(p.nodes.size()) >= k) break;
    }
    if (static_cast<int32_t>(p.nodes.size()) >= k) {
      int32_t left = tasks;
      for (size_t i = 0; i < p.nodes.size(); ++i) {
        int32_t t = std::min(tpn, left - static_cast<int32_t>(p.nodes.size() - 1 - i));
        t = std::max(t, 1);
        p.tasks[i] = t;
        left -= t;
      }
      return p;
    }
  }
  if (single) x.s.frontier.learn(classes[0].cls, classes[0].amount, x.d, k, x.s.now + 1);
  return std::nullopt;
}

// The largest v in [1, cap] for which `demand_for(v)` fits on node n over
// [t, t + d) (what it needs growing with v), with its amounts; 0 when not
// even 1 does.
template <class DemandFor>
int32_t largest_fitting(SearchCtx& x, NodeIndex n, Time t, int32_t cap, int32_t tasks, DemandFor demand_for,
                        std::vector<int64_t>& amount) {
  const NodeSpec& spec = x.s.c.nodes[n];
  auto fits = [&](int32_t v, std::vector<int64_t>& out) {
    NodeNeed need = need_on(demand_for(v), spec, tasks < 0 ? v : tasks);
    if (!need.fits) return false;
    out = amount_of(need);
    return x.s.prof[n].fits(out.data(), t, t + x.d);
  };
  std::vector<int64_t> tmp;
  if (cap < 1 || !fits(1, tmp)) return 0;
  amount = tmp;
  int32_t lo = 1, hi = cap;
  while (lo < hi) {
    int32_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid, tmp)) {
      lo = mid;
      amount = tmp;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

// The most tasks (at most `cap`) the node holds over [t, t + d).
int32_t tasks_fitting(SearchCtx& x, NodeIndex n, Time t, int32_t cap, std::vector<int64_t>& amount) {
  return largest_fitting(x, n, t, cap, -1, [&](int32_t) -> const Demand& { return x.pc.demand; }, amount);
}

// Tasks spread over as few nodes as hold them, at time t.
std::optional<Placement> spread_at(SearchCtx& x, const std::vector<ClassNeed>& classes, Time t) {
  const Demand& d = x.pc.demand;
  Placement p;
  p.start = t;
  int32_t left = d.tasks;
  Time before = t + 1;
  for (const ClassNeed& cn : classes) {
    x.s.idx(cn.cls).scan(cn.amount.data(), x.d, t, before, [&](int, NodeIndex n, Time) {
      if (!x.eligible(n)) return true;
      int32_t others_min = std::max(0, d.min_nodes - static_cast<int32_t>(p.nodes.size()) - 1);
      int32_t cap = left - others_min;
      if (cap <= 0) return false;
      std::vector<int64_t> amount;
      int32_t got = tasks_fitting(x, n, t, cap, amount);
      if (got > 0) {
        p.add(n, got, amount);
        left -= got;
      }
      return left > 0 && static_cast<int32_t>(p.nodes.size()) < d.max_nodes;
    });
    if (left == 0 || static_cast<int32_t>(p.nodes.size()) >= d.max_nodes) break;
  }
  if (left > 0 || static_cast<int32_t>(p.nodes.size()) < d.min_nodes) return std::nullopt;
  return p;
}

// A node range with -n (Demand::widest), started now: as many nodes as hold a
// task now, up to the range's top and the task count; one task on each, the
// rest on the first of them as they hold them (Slurm 22.05 ran -N 1-2 -n 2 on
// two nodes, one task each). Nothing when fewer than two nodes (or than the
// range's bottom) hold a task now.
std::optional<Placement> widest_now(SearchCtx& x, const std::vector<ClassNeed>& classes) {
  const Demand& d = x.pc.demand;
  const Time t = x.s.now;
  const int32_t target = std::min(d.max_nodes, d.tasks);
  std::vector<NodeIndex> nodes;
  std::vector<int32_t> room;
  for (const ClassNeed& cn : classes) {
    x.s.idx(cn.cls).scan(cn.amount.data(), x.d, t, t + 1, [&](int, NodeIndex n, Time) {
      if (!x.eligible(n)) return true;
      std::vector<int64_t> amount;
      if (int32_t got = tasks_fitting(x, n, t, d.tasks, amount); got > 0) {
        nodes.push_back(n);
        room.push_back(got);
      }
      return static_cast<int32_t>(nodes.size()) < target;
    });
    if (static_cast<int32_t>(nodes.size()) >= target) break;
  }
  const auto count = static_cast<int32_t>(nodes.size());
  if (count < 2 || count < d.min_nodes) return std::nullopt;
  std::vector<int32_t> tasks(nodes.size(), 1);
  int32_t left = d.tasks - count;
  if (d.even) {  // --spread-job: one more on each node in turn that has room
    for (bool placed = true; left > 0 && placed;) {
      placed = false;
      for (size_t i = 0; i < nodes.size() && left > 0; ++i) {
        if (tasks[i] < room[i]) ++tasks[i], --left, placed = true;
      }
    }
  }
  for (size_t i = 0; i < nodes.size() && left > 0; ++i) {
    const int32_t more = std::min(left, room[i] - tasks[i]);
    tasks[i] += more;
    left -= more;
  }
  if (left > 0) return std::nullopt;
  Placement p;
  p.start = t;
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::vector<int64_t> amount;
    if (tasks_fitting(x, nodes[i], t, tasks[i], amount) != tasks[i]) return std::nullopt;
    p.add(nodes[i], tasks[i], amount);
  }
  return p;
}

// Demand::grow_to: more nodes for a placement started now, each free for
// one more task, in the order the classes' scans give them, up to the top.
void grow_now(SearchCtx& x, const std::vector<ClassNeed>& classes, Placement& p) {
  const Demand& d = x.pc.demand;
  const Time t = x.s.now;
  for (const ClassNeed& cn : classes) {
    if (static_cast<int32_t>(p.nodes.size()) >= d.grow_to) return;
    x.s.idx(cn.cls).scan(cn.amount.data(), x.d, t, t + 1, [&](int, NodeIndex n, Time) {
      if (!x.eligible(n) || std::find(p.nodes.begin(), p.nodes.end(), n) != p.nodes.end()) return true;
      std::vector<int64_t> amount;
      if (tasks_fitting(x, n, t, 1, amount) == 1) p.add(n, 1, amount);
      return static_cast<int32_t>(p.nodes.size()) < d.grow_to;
    });
  }
}

// Flexible jobs first try to fit whole on one node: the per-class amounts for all tasks.
std::vector<std::vector<int64_t>> whole_job_amounts(SearchCtx& x, const std::vector<ClassNeed>& classes) {
  std::vector<std::vector<int64_t>> out;
  for (const ClassNeed& cn : classes) {
    NodeNeed need = need_on(x.pc.demand, *x.s.classes[cn.cls].spec, x.pc.demand.tasks);
    out.push_back(need.fits ? amount_of(need) : std::vector<int64_t>{});
  }
  return out;
}

// Nodes in cluster order (what allocations and SCHEDNODES show).
void order_by_rank(Placement& p, const Scheduler::Impl& s) {
  (void)s;
  if (std::is_sorted(p.nodes.begin(), p.nodes.end())) return;
  std::vector<size_t> idx(p.nodes.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return p.nodes[a] < p.nodes[b]; });
  Placement q;
  q.start = p.start;
  q.partition = p.partition;
  q.alt = p.alt;
  for (size_t i : idx) q.add(p.nodes[i], p.tasks[i], p.amount(i), p.off[i + 1] - p.off[i]);
  p = std::move(q);
}

// Demand::pack: the nodes the even shape chose, in cluster order, the first
// given as many tasks as it holds, leaving one for each node after it. The
// even shape fits, so this always places every task; it is kept if not.
void pack_first(SearchCtx& x, Placement& p) {
  const auto k = static_cast<int32_t>(p.nodes.size());
  Placement q;
  q.start = p.start;
  q.partition = p.partition;
  q.alt = p.alt;
  q.reserve(p.nodes.size(), p.off.size() > 1 ? p.off[1] : 0);
  int32_t left = x.pc.demand.tasks;
  std::vector<int64_t> amount;
  for (int32_t i = 0; i < k; ++i) {
    const int32_t cap = left - (k - 1 - i);
    const int32_t got = cap > 0 ? tasks_fitting(x, p.nodes[static_cast<size_t>(i)], p.start, cap, amount) : 0;
    if (got <= 0) return;
    q.add(p.nodes[static_cast<size_t>(i)], got, amount);
    left -= got;
  }
  if (left == 0) p = std::move(q);
}

// Demand::gpus_total: the nodes and tasks chosen, the first node given as
// many of the job's GPUs as it holds, leaving one for each node after it.
// The even share fits, so this always places every GPU; it is kept if not.
void pack_gpus(SearchCtx& x, Placement& p) {
  const Demand& d = x.pc.demand;
  const auto k = static_cast<int32_t>(p.nodes.size());
  std::vector<int32_t> gpus(p.nodes.size(), 0);
  std::vector<int64_t> flat, amount;
  int32_t left = d.gpus_total;
  for (int32_t i = 0; i < k; ++i) {
    const auto n = static_cast<size_t>(i);
    const int32_t got = largest_fitting(x, p.nodes[n], p.start, left - (k - 1 - i), p.tasks[n],
                                        [&](int32_t g) { return with_gpus_per_node(d, g); }, amount);
    if (got < 1 || amount.size() != p.off[n + 1] - p.off[n]) return;
    gpus[n] = got;
    left -= got;
    flat.insert(flat.end(), amount.begin(), amount.end());
  }
  if (left != 0 || flat.size() != p.flat.size()) return;
  p.flat = std::move(flat);
  p.gpus = std::move(gpus);
}

}  // namespace

std::optional<Placement> Scheduler::Impl::start_now(const PartChoice& pc, const JobSpec& job) {
  const Demand& d = pc.demand;
  for (size_t alt = 0; alt < pc.alts.size(); ++alt) {
    SearchCtx x{*this, pc, alt, duration(pc), 0, &job, true};
    const auto& classes = pc.alts[alt];
    std::optional<Placement> p;
    if (d.fixed_shape()) {
      p = d.min_nodes == 1 ? single_now(x, classes, d.tasks, nullptr)
                           : multi_now(x, classes, d.min_nodes, d.tasks_per_node, d.tasks);
      if (p && d.grow_to > 0) grow_now(x, classes, *p);
    } else {
      if (d.widest) p = widest_now(x, classes);
      if (!p) {
        auto whole = whole_job_amounts(x, classes);
        p = single_now(x, classes, d.tasks, &whole);
      }
      if (!p && d.max_nodes > 1) p = spread_at(x, classes, now);
    }
    if (p) {
      p->partition = pc.partition;
      p->alt = alt;
      order_by_rank(*p, *this);
      if (d.pack && d.fixed_shape() && !d.whole_node && p->nodes.size() > 1) pack_first(x, *p);
      if (d.gpus_total > 0 && !d.whole_node && p->nodes.size() > 1) pack_gpus(x, *p);
      return p;
    }
  }
  return std::nullopt;
}

// ---------------------------------------------------------------- later

namespace {

std::optional<Placement> single_later(SearchCtx& x, const std::vector<ClassNeed>& classes, int32_t tasks,
                                      const std::vector<std::vector<int64_t>>* amounts, bool ties) {
  Time best = kNever;
  NodeIndex who = -1;
  int64_t key = 0;
  const std::vector<int64_t>* chosen = nullptr;
  for (size_t i = 0; i < classes.size(); ++i) {
    const ClassNeed& cn = classes[i];
    const std::vector<int64_t>& amount = amounts ? (*amounts)[i] : cn.amount;
    if (amount.empty()) continue;
    NodeIndex before_who = who;
    // Among equal starts prefer the node with the least free now: a
    // reservation on a busy node leaves idle ones to backfill.
    auto accept = [&](NodeIndex n) { return x.eligible(n); };
    auto tie_key = [&](NodeIndex n) { return x.s.cores_now(n); };
    const ClassIndex& idx = x.s.idx(cn.cls);
    Time class_best = best;  // this class's earliest is at least what it leaves in best
    // A job starts on a node either at the first moment it may (now, or
    // not_before behind FCFS order), or at a moment that node's free
    // capacity grows. That first moment first:
    Time exact = std::max(x.s.now, x.not_before);
    Time from = std::max(exact, x.s.frontier.lower_bound(cn.cls, amount, x.d, 1));
    if (from <= exact) {
      Time at_best = std::min(best, exact + 1);
      idx.earliest(amount.data(), x.d, exact, at_best, who, key, x.s.prof, accept, false, tie_key);
      if (at_best <= exact) best = at_best;
      from = exact + 1;
    }
    if (best > exact) {
      // The moments capacity grows, from what earlier jobs of this cycle
      // taught; the tree search settles what that walk does not.
      Time resume = from;
      if (!idx.earliest_by_rises(amount.data(), x.d, from, best, who, key, x.s.prof, accept, ties, tie_key,
                                 kRiseChecks, resume)) {
        idx.earliest(amount.data(), x.d, resume, best, who, key, x.s.prof, accept, ties, tie_key);
      }
    }
    // Learn only unconditioned answers: a plan held behind not_before says
    // nothing about how early the class could take the job.
    if (!x.filtered() && x.not_before <= x.s.now) {
      Time learnt = who != before_who ? best : std::min(class_best, idx.window_end());
      if (who == before_who && class_best == kNever) learnt = idx.window_end();
      x.s.frontier.learn(cn.cls, amount, x.d, 1, learnt);
    }
    if (who != before_who) chosen = &amount;
  }
  // Nodes passed over because another user's job holds them now (user
  // exclusivity): each may take the job once no such hold overlaps its run.
  if (!x.s.node_users.empty()) {
    for (size_t i = 0; i < classes.size(); ++i) {
      const std::vector<int64_t>& amount = amounts ? (*amounts)[i] : classes[i].amount;
      if (amount.empty()) continue;
      for (NodeIndex n : x.s.classes[classes[i].cls].members) {
        if (!x.user_blocked(n)) continue;
        if (needs_filter(x.pc.demand) && !node_eligible(x.pc.demand, x.s.c, n, x.alt)) continue;
        Time t = std::max(x.s.now, x.not_before);
        for (int tries = 0; tries < 8 && t < best; ++tries) {
          if (Time until = x.s.user_blocked_until(n, *x.job, x.pc.partition, t, sat_add(t, x.d)); until > 0) {
            t = until;
            continue;
          }
          Time fit = x.s.prof[n].earliest_fit(amount.data(), x.d, t, best);
          if (fit == t) {
            best = t;
            who = n;
            chosen = &amount;
            break;
          }
          t = fit;
        }
      }
    }
  }
  if (who < 0) return std::nullopt;
  Placement p;
  p.start = best;
  p.add(who, tasks, *chosen);
  return p;
}

// k nodes free together: the k-th smallest per-node earliest start is a
// lower bound of the answer; repeat from it until k nodes fit at once.
std::optional<Placement> multi_later(SearchCtx& x, const std::vector<ClassNeed>& classes, int32_t k, int32_t tpn,
                                     int32_t tasks, bool ties) {
  // Every node of the job starts together: no earlier than the earliest any
  // one class could give one node, as learnt this cycle.
  Time t = kNever;
  for (const ClassNeed& cn : classes) t = std::min(t, x.s.frontier.lower_bound(cn.cls, cn.amount, x.d, 1));
  t = std::max({t == kNever ? x.s.now : t, x.s.now, x.not_before});
  bool learn = classes.size() == 1 && !x.filtered() && x.not_before <= x.s.now;
  if (learn) t = std::max(t, x.s.frontier.lower_bound(classes[0].cls, classes[0].amount, x.d, k));
  if (classes.size() == 1) {
    t = x.s.idle_bound(classes[0], k, x.d, t);
    if (t == kNever) return std::nullopt;
  }
  auto answer = [&](Time at) {
    if (learn) x.s.frontier.learn(classes[0].cls, classes[0].amount, x.d, k, at);
  };
  // The k best so far, worst on top (a max-heap, as std::priority_queue
  // keeps it), in storage kept between calls.
  static thread_local std::vector<Cand> heap_store;
  std::vector<Cand>& heap = heap_store;
  // The first k candidates go in as they come and become a heap at once;
  // a better one then takes the worst one's place, sifted down.
  auto heap_add = [&](const Cand& c) {
    const auto n = heap.size();
    if (static_cast<int32_t>(n) < k) {
      heap.push_back(c);
      if (static_cast<int32_t>(n) + 1 == k) std::make_heap(heap.begin(), heap.end());
      return;
    }
    if (!(c < heap.front())) return;
    size_t i = 0;
    while (true) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && heap[child] < heap[child + 1]) ++child;
      if (!(c < heap[child])) break;
      heap[i] = heap[child];
      i = child;
    }
    heap[i] = c;
  };
  for (int iter = 0; iter < 64; ++iter) {
    heap.clear();
    Time limit = x.s.window_end();
    Time before = limit;  // lowered as the heap fills: later starts cannot make the k best
    for (size_t ci = 0; ci < classes.size(); ++ci) {
      const ClassNeed& cn = classes[ci];
      x.s.idx(cn.cls).scan(cn.amount.data(), x.d, t, before, [&](int leaf, NodeIndex n, Time lb) {
        if (!x.eligible(n)) return true;
        Time e = x.s.prof[n].earliest_fit(cn.amount.data(), x.d, std::max(t, lb), before);
        if (e == kNever) return true;
        Cand cand{e, ties ? x.s.cores_now(n) : 0,
                  (static_cast<int64_t>(ci) << 32) | static_cast<int64_t>(leaf), n};
        heap_add(cand);
        if (static_cast<int32_t>(heap.size()) >= k) before = heap.front().start + 1;
        return true;
      });
    }
    if (static_cast<int32_t>(heap.size()) < k) {
      answer(limit);
      return std::nullopt;
    }
    Time kth = heap.front().start;
    if (kth == t) {
      answer(t);
      Placement p;
      p.start = t;
      static thread_local std::vector<Cand> picked;
      picked.assign(heap.begin(), heap.end());
      std::sort(picked.begin(), picked.end(), [](const Cand& a, const Cand& b) { return a.node < b.node; });
      p.reserve(picked.size(), classes.front().amount.size());
      int32_t left = tasks;
      for (size_t i = 0; i < picked.size(); ++i) {
        int32_t tk = std::max(1, std::min(tpn, left - static_cast<int32_t>(picked.size() - 1 - i)));
        p.add(picked[i].node, tk, classes[static_cast<size_t>(picked[i].rank >> 32)].amount);
        left -= tk;
      }
      return p;
    }
    t = kth;
  }
  return std::nullopt;
}

std::optional<Placement> spread_later(SearchCtx& x, const std::vector<ClassNeed>& classes) {
  std::vector<Time> times{std::max(x.s.now, x.not_before)};
  for (const ClassNeed& cn : classes) {
    for (NodeIndex n : x.s.classes[cn.cls].members) {
      x.s.prof[n].rises(std::max(x.s.now, x.not_before), x.s.window_end(), times);
    }
  }
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());
  if (times.size() > 64) times.resize(64);
  for (Time t : times) {
    if (auto p = spread_at(x, classes, t)) return p;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Placement> Scheduler::Impl::plan_later(const PartChoice& pc, const JobSpec& job, bool for_reservation,
                                                     Time not_before) {
  const Demand& d = pc.demand;
  std::optional<Placement> best;
  for (size_t alt = 0; alt < pc.alts.size(); ++alt) {
    SearchCtx x{*this, pc, alt, duration(pc), not_before, &job};
    const auto& classes = pc.alts[alt];
    if (classes.empty()) continue;
    std::optional<Placement> p;
    if (d.fixed_shape()) {
      p = d.min_nodes == 1 ? single_later(x, classes, d.tasks, nullptr, for_reservation)
                           : multi_later(x, classes, d.min_nodes, d.tasks_per_node, d.tasks, for_reservation);
    } else {
      auto whole = whole_job_amounts(x, classes);
      bool any_whole = std::any_of(whole.begin(), whole.end(), [](const auto& a) { return !a.empty(); });
      p = any_whole ? single_later(x, classes, d.tasks, &whole, for_reservation) : std::nullopt;
      if (!p && d.max_nodes > 1) p = spread_later(x, classes);
    }
    if (p && (!best || p->start < best->start)) {
      p->partition = pc.partition;
      p->alt = alt;
      best = std::move(p);
    }
  }
  if (best) order_by_rank(*best, *this);
  return best;
}

void Scheduler::Impl::count_idle_in(NodeProfile& into, NodeIndex n, Time t0, Time t1, int64_t delta,
                                    int64_t* throughout) {
  int64_t cores = classes[class_of[n]].capacity[0];
  prof[n].for_steps(t0, t1, [&](Time s0, Time s1, const int64_t* f) {
    if (f[0] != cores) return;
    if (throughout && s0 <= t0 && s1 >= t1) {  // idle over all of it: the caller counts it
      ++*throughout;
      return;
    }
    int64_t d = -delta;
    into.take(std::max(s0, t0), std::min(s1, t1), &d);
  });
}

bool Scheduler::Impl::idle_now(const ClassNeed& cn, int32_t k, Time d) {
  if (cn.amount[0] < classes[cn.cls].capacity[0]) return true;
  if (k < 1) return idle_bound(cn, k, d, now) == now;
  auto& memo = idle_now_memo[static_cast<size_t>(cn.cls)];
  if (memo.size() < static_cast<size_t>(k)) memo.resize(static_cast<size_t>(k));
  IdleNowMemo& m = memo[static_cast<size_t>(k - 1)];
  if (d <= m.yes_up_to) return true;
  if (d >= m.no_from) return false;
  const bool yes = idle_bound(cn, k, d, now) == now;
  (yes ? m.yes_up_to : m.no_from) = d;
  return yes;
}

Time Scheduler::Impl::idle_bound(const ClassNeed& cn, int32_t k, Time d, Time from) {
  if (cn.amount[0] < classes[cn.cls].capacity[0]) return from;
  int64_t need = k;
  Time t = idle_of(cn.cls).earliest_fit(&need, d, from, window_end());
  return t;
}

void Scheduler::Impl::collect_node_users(const CycleInput& input) {
  node_users.clear();
  bool any = std::any_of(c.partitions.begin(), c.partitions.end(), [](const PartitionSpec& p) { return p.exclusive_user; });
  any = any || std::any_of(input.running.begin(), input.running.end(),
                           [](const RunningJob& r) { return r.spec && r.spec->exclusive_user; });
  any = any || std::any_of(input.pending.begin(), input.pending.end(),
                           [](const JobSpec* j) { return j->exclusive_user; });
  if (!any) return;
  node_users.resize(c.nodes.size());
  std::vector<NodeIndex> nodes;
  for (const RunningJob& r : input.running) {
    if (!r.spec) continue;
    nodes.clear();
    for (const NodeTake& t : r.alloc.nodes) nodes.push_back(t.node);
    add_node_users(nodes, *r.spec, user_exclusive(*r.spec, r.partition), 0, held_end(r));
  }
}

void Scheduler::Impl::add_node_users(const std::vector<NodeIndex>& nodes, const JobSpec& job, bool exclusive,
                                     Time from, Time to) {
  if (node_users.empty()) return;
  for (NodeIndex n : nodes) node_users[static_cast<size_t>(n)].push_back(UserHold{&job.user, exclusive, from, to});
}

Time Scheduler::Impl::user_blocked_until(NodeIndex n, const JobSpec& job, int32_t partition, Time from,
                                         Time to) const {
  const bool mine = user_exclusive(job, partition);
  Time until = 0;
  for (const UserHold& h : node_users[static_cast<size_t>(n)]) {
    if (h.from >= to || h.to <= from || *h.user == job.user || !(h.exclusive || mine)) continue;
    until = std::max(until, h.to);
  }
  return until;
}

void Scheduler::Impl::commit(const PartChoice& pc, const Placement& p, Time end) {
  (void)pc;
  ++commits;
  // The nodes are not idle while the job holds them. Those idle over the
  // whole of [start, end) leave their class's counts together, at the end.
  std::vector<std::pair<int32_t, int64_t>>& whole = commit_idle;
  whole.clear();
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    NodeIndex n = p.nodes[i];
    touch(n, kSavedProfile);
    if (const int32_t cls = class_of[n]; idle_built[static_cast<size_t>(cls)]) {
      if (whole.empty() || whole.back().first != cls) {
        whole.emplace_back(cls, 0);
        idle_now_memo[static_cast<size_t>(cls)].clear();  // its idle counts change
      }
      count_idle_in(idle[cls], n, p.start, end, -1, &whole.back().second);
    }
    prof[n].take(p.start, end, p.amount(i));
    cores_now_cache[static_cast<size_t>(n)].cycle = 0;
    if (index_built[class_of[n]]) index[class_of[n]].update(leaf_of[n], p.start, end, p.amount(i), prof);
  }
  for (auto [cls, nodes] : whole) {
    if (nodes > 0) idle[cls].take(p.start, end, &nodes);
  }
}

}  // namespace drover::core
