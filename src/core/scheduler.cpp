// The cycle: set up what is free now and later, order the queue, then walk
// it once. Each job either starts now (on resources no reservation needs),
// or is planned at its earliest start — holding a reservation when the
// policy gives it one (bf_reserve_depth: 1 = EASY, unbounded =
// conservative; FCFS reserves for every waiting job and starts nothing out
// of order) — or waits on a reason that needs no search.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "core/cycle.hpp"
#include "core/priority.hpp"

namespace drover::core {

namespace {

// When the job's age starts: once its dependency is met (the caller records
// that time), else from its submission or begin time. A job still waiting on
// its dependency has no age yet (0), as in Slurm 22.05, where its priority
// stayed put while a job beside it that waited on resources aged.
Time eligible_since(const JobSpec& job) {
  if (job.eligible_time > 0) return job.eligible_time;
  if (!job.dependency.items.empty()) return 0;
  return std::max(job.submit_time, job.begin_time);
}

}  // namespace

Scheduler::Impl::Impl(const Cluster& cl) : c(cl) {
  tres_ids.build(c);
  class_of = c.group_of;
  leaf_of.assign(c.nodes.size(), 0);
  for (const NodeGroup& g : c.groups) {
    const NodeSpec& n = c.nodes[g.members.front()];
    NodeClass cls;
    cls.spec = &n;
    cls.members = g.members;
    cls.dims = 2 + static_cast<int>(n.gres.size());
    cls.has_gpus = n.gpus() > 0;
    cls.capacity = {n.cores(), n.mem_mb};
    for (const GresPool& gp : n.gres) cls.capacity.push_back(gp.no_consume ? 0 : gp.count);
    for (size_t i = 0; i < g.members.size(); ++i) leaf_of[g.members[i]] = static_cast<int32_t>(i);
    classes.push_back(std::move(cls));
  }
  for (const PartitionSpec& p : c.partitions) partition_qos.push_back(c.find_qos(p.qos));
  prof.resize(c.nodes.size());
  cores_now_cache.resize(c.nodes.size());
  use.resize(c.nodes.size());
  index.resize(classes.size());
  idle.resize(classes.size());
}

Time Scheduler::Impl::round_up(Time t) const {
  if (t >= kForever) return kForever;
  if (res == 1) return t;  // bf_resolution=1: no division in the walk's hottest path
  return (t + res - 1) / res * res;
}

void Scheduler::Impl::setup(const CycleInput& input) {
  in = &input;
  now = input.now;
  res = std::max<Time>(1, c.sched.bf_resolution);
  window = std::max<Time>(1, c.sched.bf_window);
  undo_cycle();
  avail.assign(c.nodes.size(), NodeAvail::kUp);
  if (input.node_avail.size() == c.nodes.size()) avail.assign(input.node_avail.begin(), input.node_avail.end());
  idle_base.resize(classes.size());
  idle_base_built.resize(classes.size(), 0);  // reset below when the kept state is not
  bool kept = have_base && now >= base_now && avail == base_avail && sync_running(input);
  if (!kept) idle_base_built.assign(classes.size(), 0);
  have_base = kept || rebuild(input);
  base_now = now;
  base_avail = avail;
  frontier.reset(classes.size(), reference_search);
  idle.resize(classes.size());
  idle_built.assign(classes.size(), 0);  // each built when a search first needs it
  commits = 0;
  idle_now_memo.resize(classes.size());
  for (auto& m : idle_now_memo) m.clear();
  for (size_t k = 0; k < classes.size(); ++k) {
    if (!idle_base_built[k]) continue;
    idle[k] = idle_base[k];
    idle_built[k] = 1;
  }
  index_built.assign(classes.size(), 0);  // each built when a search first needs it
  exhaustive_visits.assign(classes.size(), 0);
  apply_blocks(input.blocks);
}

// Each block takes what its node has free over its window, step by step,
// as a commit does (undone at the next setup like the cycle's own).
void Scheduler::Impl::apply_blocks(std::span<const NodeBlock> blocks) {
  static const PartChoice none;
  for (const NodeBlock& b : blocks) {
    if (b.node < 0 || b.node >= static_cast<NodeIndex>(c.nodes.size())) continue;
    if (avail[b.node] != NodeAvail::kUp) continue;  // takes nothing anyway
    const Time t0 = std::max(b.start, now);
    if (b.end <= t0) continue;
    std::vector<std::tuple<Time, Time, std::vector<int64_t>>> steps;
    prof[b.node].for_steps(t0, b.end, [&](Time s0, Time s1, const int64_t* free) {
      std::vector<int64_t> amount(free, free + prof[b.node].dims());
      for (int64_t& v : amount) v = std::max<int64_t>(v, 0);
      if (std::any_of(amount.begin(), amount.end(), [](int64_t v) { return v > 0; })) {
        steps.emplace_back(std::max(s0, t0), std::min(s1, b.end), std::move(amount));
      }
    });
    for (auto& [s0, s1, amount] : steps) {
      Placement p;
      p.start = s0;
      p.add(b.node, 0, amount);
      commit(none, p, s1);
    }
  }
}

void Scheduler::Impl::limits_of(const JobSpec* spec, int32_t qos, int32_t partition, const Allocation& a,
                                 HeldLimits& out) {
  out.counted = spec != nullptr;
  out.qos = qos;
  out.assoc = -1;
  out.partition_qos = -1;
  out.array_job = 0;
  out.tres.clear();
  if (!spec) return;
  out.array_job = spec->array_job_id;
  if (!limits.active()) return;
  out.partition_qos = partition >= 0 && partition < static_cast<int32_t>(c.partitions.size())
                          ? partition_qos[static_cast<size_t>(partition)]
                          : -1;
  out.user = spec->user;
  out.assoc = c.find_assoc(spec->account, spec->user);
  tres_ids.held(c, a, spec->licenses, out.tres);
}

void Scheduler::Impl::count_running(const Allocation& a, Time end, int sign, bool profile_only,
                                    const HeldLimits* lim) {
  std::vector<int64_t>& amount = held_scratch;
  for (const NodeTake& t : a.nodes) {
    if (t.node < 0 || t.node >= static_cast<NodeIndex>(c.nodes.size())) continue;
    const NodeSpec& spec = c.nodes[t.node];
    NodeUse& u = use[t.node];
    if (!profile_only) {
      for (int32_t core : t.cores) {
        if (core >= 0 && core < static_cast<int32_t>(u.core_used.size())) u.core_used[core] += sign;
      }
    }
    amount.assign(static_cast<size_t>(classes[class_of[t.node]].dims), 0);
    int32_t threads = std::max(1, spec.threads_per_core);
    amount[0] = t.cores.empty() ? (t.cpus + threads - 1) / threads : static_cast<int64_t>(t.cores.size());
    amount[1] = t.mem_mb;
    for (const GresTake& g : t.gres) {
      if (g.pool < 0 || g.pool >= static_cast<int32_t>(spec.gres.size())) continue;
      if (!spec.gres[g.pool].no_consume) amount[2 + g.pool] += g.count;
      if (profile_only) continue;
      for (int32_t d : g.devices) {
        if (d >= 0 && d < static_cast<int32_t>(u.dev_used[g.pool].size())) u.dev_used[g.pool][d] += sign;
      }
    }
    if (avail[t.node] != NodeAvail::kUp) continue;
    if (sign < 0) {
      for (int64_t& v : amount) v = -v;
    }
    take_kept(t.node, now, end, amount.data());
  }
  if (!profile_only && lim) count_limits(*lim, sign);
}

void Scheduler::Impl::count_limits(const HeldLimits& lim, int sign) {
  if (!lim.counted) return;
  if (limits.active()) {
    limits.add(lim.qos, lim.partition_qos, lim.user, lim.assoc, lim.tres, lim.array_job, sign);
  } else {
    limits.add_array_element(lim.array_job, sign);
  }
}

// A stamped running job, kept and counted in.
void Scheduler::Impl::adopt(Held& h, const RunningJob& r) {
  h.stamp = r.stamp;
  h.seen = cycle_no;
  h.end = held_end(r);
  h.alloc = r.alloc;
  limits_of(r.spec, r.qos, r.partition, r.alloc, h.limits);
  count_held(h, +1, false);
}

bool Scheduler::Impl::rebuild(const CycleInput& input) {
  ++kept_version;
  std::vector<int64_t>& none = held_scratch;  // what a node that is not up has free
  for (size_t n = 0; n < c.nodes.size(); ++n) {
    const NodeClass& cls = classes[class_of[n]];
    const int64_t* cap = cls.capacity.data();
    if (avail[n] != NodeAvail::kUp) {
      none.assign(cls.capacity.size(), 0);
      cap = none.data();
    }
    prof[n].reset(now, cap, cls.dims);
    const NodeSpec& spec = c.nodes[n];
    use[n].core_used.assign(static_cast<size_t>(std::max(0, spec.cores())), 0);
    use[n].dev_used.resize(spec.gres.size());
    for (size_t p = 0; p < spec.gres.size(); ++p) use[n].dev_used[p].assign(spec.gres[p].device_ids.size(), 0);
  }
  limits.reset(c, tres_ids);
  held.clear();
  free_held.clear();
  held_of.clear();
  held_at.clear();
  bool stamped = std::all_of(input.running.begin(), input.running.end(), [](const RunningJob& r) { return r.stamp != 0; });
  for (const RunningJob& r : input.running) {
    if (!stamped) {  // nothing is kept
      limits_of(r.spec, r.qos, r.partition, r.alloc, held_limits_scratch);
      count_running(r.alloc, held_end(r), +1, false, &held_limits_scratch);
      continue;
    }
    auto slot = static_cast<uint32_t>(held.size());
    adopt(held.emplace_back(), r);
    held_at.push_back(slot);
    if (!held_of.emplace(r.stamp, slot).second) {  // the same stamp twice: keep nothing
      held.clear();
      held_of.clear();
      held_at.clear();
      stamped = false;
    }
  }
  return stamped;
}

bool Scheduler::Impl::sync_running(const CycleInput& input) {
  // Match first, changing nothing: every record stamped, no stamp twice.
  const size_t n_in = input.running.size();
  held_match.assign(n_in, UINT32_MAX);
  for (size_t i = 0; i < n_in; ++i) {
    const uint64_t stamp = input.running[i].stamp;
    if (stamp == 0) return false;
    uint32_t slot = UINT32_MAX;
    if (i < held_at.size() && held[held_at[i]].stamp == stamp) {
      slot = held_at[i];
    } else if (auto it = held_of.find(stamp); it != held_of.end()) {
      slot = it->second;
    }
    if (slot == UINT32_MAX) continue;
    if (held[slot].seen == cycle_no) return false;
    held[slot].seen = cycle_no;
    held_match[i] = slot;
  }
  for (NodeProfile& p : prof) p.advance(now);
  for (size_t k = 0; k < idle_base.size(); ++k) {
    if (idle_base_built[k]) idle_base[k].advance(now);
  }
  for (uint32_t slot = 0; slot < held.size(); ++slot) {  // gone: counted out
    Held& h = held[slot];
    if (h.stamp == 0 || h.seen == cycle_no) continue;
    ++kept_version;
    count_held(h, -1, false);
    held_of.erase(h.stamp);
    h.stamp = 0;
    free_held.push_back(slot);
  }
  held_at.resize(n_in);
  for (size_t i = 0; i < n_in; ++i) {
    const RunningJob& r = input.running[i];
    uint32_t slot = held_match[i];
    if (slot != UINT32_MAX) {
      Held& h = held[slot];
      if (Time end = held_end(r); end != h.end) {  // past its end: the cut moves with now
        ++kept_version;
        count_held(h, -1, true);
        h.end = end;
        count_held(h, +1, true);
      }
    } else {  // new: counted in
      if (free_held.empty()) {
        slot = static_cast<uint32_t>(held.size());
        held.emplace_back();
      } else {
        slot = free_held.back();
        free_held.pop_back();
      }
      ++kept_version;
      adopt(held[slot], r);
      held_of.emplace(r.stamp, slot);
    }
    held_at[i] = slot;
  }
  return true;
}

void Scheduler::Impl::touch(NodeIndex n, uint8_t what) {
  if (!have_base) return;  // the next cycle counts everything afresh: nothing to undo
  if (dirty.empty()) {
    dirty.assign(c.nodes.size(), 0);
    saved_prof.resize(c.nodes.size());
    saved_use.resize(c.nodes.size());
  }
  const auto more = static_cast<uint8_t>(what & ~dirty[n]);
  if (!more) return;
  if (!dirty[n]) dirty_list.push_back(n);
  dirty[n] |= more;
  if (more & kSavedProfile) saved_prof[n] = prof[n];
  if (more & kSavedUse) saved_use[n] = use[n];
}

// Back to what the last setup left: the starts come back as running jobs
// (or not, if the caller did not start them), the reservations are planned again.
void Scheduler::Impl::undo_cycle() {
  for (NodeIndex n : dirty_list) {
    if (dirty[n] & kSavedProfile) std::swap(prof[n], saved_prof[n]);
    if (dirty[n] & kSavedUse) std::swap(use[n], saved_use[n]);
    dirty[n] = 0;
  }
  dirty_list.clear();
  for (auto it = cycle_limit_adds.rbegin(); it != cycle_limit_adds.rend(); ++it) count_limits(*it, -1);
  cycle_limit_adds.clear();
}

// Idle nodes of the class over time, from each node's idle periods as the
// profiles are now (commits keep it current once built: commit).
const NodeProfile& Scheduler::Impl::idle_of(int32_t cls) {
  auto k = static_cast<size_t>(cls);
  if (idle_built[k]) return idle[k];
  build_idle(cls, false, idle[k]);
  idle_built[k] = 1;
  if (have_base) {  // the next cycles start from it
    build_idle(cls, true, idle_base[k]);
    idle_base_built[k] = 1;
  }
  return idle[k];
}

void Scheduler::Impl::build_idle(int32_t cls, bool kept, NodeProfile& out) {
  auto k = static_cast<size_t>(cls);
  idle_edges.clear();
  int64_t cores = classes[k].capacity[0];
  for (NodeIndex n : classes[k].members) {
    if (avail[n] != NodeAvail::kUp) continue;
    const NodeProfile& p = kept && !dirty.empty() && (dirty[n] & kSavedProfile) ? saved_prof[n] : prof[n];
    p.for_steps(now, kForever, [&](Time s0, Time s1, const int64_t* f) {
      if (f[0] != cores) return;
      idle_edges.push_back({s0, +1});
      if (s1 < kForever) idle_edges.push_back({s1, -1});
    });
  }
  out.assign_edges(now, idle_edges);
}

void Scheduler::Impl::take_kept(NodeIndex n, Time t0, Time t1, const int64_t* amount) {
  const auto k = static_cast<size_t>(class_of[n]);
  const bool counted = idle_base_built[k] != 0;
  if (counted) count_idle_in(idle_base[k], n, t0, t1, -1);
  prof[n].take(t0, t1, amount);
  if (counted) count_idle_in(idle_base[k], n, t0, t1, +1);
}

ClassIndex& Scheduler::Impl::idx(int32_t cls) {
  auto k = static_cast<size_t>(cls);
  const size_t members = classes[k].members.size();
  const int64_t looks =  // at every member, before the index pays (kSmallClass)
      members <= kSmallClass ? std::max(searches_before_index, kSearchesBeforeIndexSmallClass) : searches_before_index;
  if (!index_built[k]) {
    bool small = members <= small_class;
    index[k].build(classes[k].members, prof, classes[k].dims, now, window, res, reference_search || small);
    index_built[k] = 1;
  } else if (index[k].exhaustive() && !reference_search &&
             index[k].visits() > looks * static_cast<int64_t>(members)) {
    // A class searched often in this cycle (many pending jobs use it):
    // from here on its index is cheaper than looking at every member. It
    // is built from the profiles as they are now, as a first use would;
    // the searches give the same answers either way.
    exhaustive_visits[k] += index[k].visits();
    index[k].build(classes[k].members, prof, classes[k].dims, now, window, res, false);
  }
  return index[k];
}

const JobCache& Scheduler::Impl::cached(const JobSpec& job) {
  JobCache& e = cache[&job];
  const auto cycle32 = static_cast<uint32_t>(cycle_no);
  if (e.seen != 0 && e.id == job.id && e.revision == job.revision) {
    e.seen = cycle32;
    return e;
  }
  e = JobCache{};
  e.id = job.id;
  e.revision = job.revision;
  e.seen = cycle32;
  std::vector<int32_t> parts;
  if (job.partitions.empty() || (job.partitions.size() == 1 && job.partitions[0].empty())) {
    if (c.default_partition() >= 0) parts.push_back(c.default_partition());
  } else {
    for (const std::string& name : job.partitions) {
      int32_t p = c.find_partition(name);
      if (p >= 0) parts.push_back(p);
    }
  }
  for (int32_t p : parts) {
    auto d = resolve_demand(c, job, p);
    if (d) e.parts.push_back(part_choice(std::move(d).value()));
  }
  // A job of several partitions is tried in the one where it ranks highest
  // first, as Slurm 22.05 does: PriorityTier, then its priority there (the
  // TRES factor weighs what it asks against that partition's total: on the
  // anchor cluster `-p compute,highmem` of one CPU ran on the one-node
  // highmem, `-p compute,interactive` on compute); else in the order given.
  std::stable_sort(e.parts.begin(), e.parts.end(), [&](const auto& a, const auto& b) {
    const int32_t ta = c.partitions[a->partition].priority_tier, tb = c.partitions[b->partition].priority_tier;
    if (ta != tb) return ta > tb;
    return std::floor(a->priority_fixed) > std::floor(b->priority_fixed);
  });
  e.refused = e.parts.empty();
  return e;
}

// A job's place in the queue: the highest PriorityTier and priority over
// the partitions it may run in.
QueueEntry Scheduler::Impl::entry(const JobSpec& job, const FairShareFactors* fs, Time at) {
  const JobCache& jc = cached(job);
  QueueEntry e{&job, &jc, 0, 0};
  for (const auto& part : jc.parts) {
    const PartChoice& pc = *part;
    e.tier = std::max(e.tier, c.partitions[pc.partition].priority_tier);
    e.priority = std::max(e.priority, priority_total(c, job, pc.priority_fixed, fs, at, eligible_since(job)));
  }
  // PriorityFlags=INCR_ONLY: no lower than any cycle ranked it before.
  if (c.priority.incr_only && !job.admin_priority && job.hold == Hold::kNone) {
    e.priority = std::max(e.priority, jc.priority_floor);
    jc.priority_floor = e.priority;
  }
  return e;
}

namespace {

// FNV-1a over a demand's fields, word by word (equal demands hash equal;
// operator== settles the rest).
uint64_t demand_hash(const Demand& d) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  auto mix_text = [&](const std::string& s) { mix(std::hash<std::string>{}(s)); };
  for (int64_t v : {int64_t{d.partition}, int64_t{d.qos}, d.time_limit, int64_t{d.min_nodes}, int64_t{d.max_nodes},
                    int64_t{d.tasks}, int64_t{d.tasks_per_node}, int64_t{d.cpus_per_task},
                    int64_t{d.min_cpus_per_node}, d.min_tmp_disk_mb, int64_t{d.sockets}, int64_t{d.cores_per_socket},
                    int64_t{d.threads_per_core}, int64_t{d.tasks_per_socket}, int64_t{d.tasks_per_core},
                    static_cast<int64_t>(d.mem_mode), d.mem_mb,
                    int64_t{d.gpus_per_task.count}, int64_t{d.cpus_per_gpu}, int64_t{d.whole_node}}) {
    mix(static_cast<uint64_t>(v));
  }
  for (const GresNeed& g : d.gres) {
    mix_text(g.name);
    mix_text(g.type);
    mix(static_cast<uint64_t>(g.count));
  }
  for (const Constraint& a : d.alternatives) mix_text(a.text());
  for (NodeIndex n : d.required) mix(static_cast<uint64_t>(n));
  mix(d.required.size());
  for (NodeIndex n : d.excluded) mix(static_cast<uint64_t>(n));
  mix(d.excluded.size());
  for (const auto& [name, v] : d.licenses) {
    mix_text(name);
    mix(static_cast<uint64_t>(v));
  }
  return h;
}

}  // namespace

std::shared_ptr<const PartChoice> Scheduler::Impl::part_choice(Demand d) {
  const uint64_t h = demand_hash(d);
  auto [lo, hi] = shared_parts.equal_range(h);
  for (auto it = lo; it != hi; ++it) {
    if (it->second->demand == d) return it->second;
  }
  const int32_t p = d.partition;
  auto made = std::make_shared<PartChoice>();
  PartChoice& pc = *made;
  pc.partition = p;
  pc.demand = std::move(d);
  pc.static_reason = static_limit_reason(c, pc.demand);
  pc.tres = tres_ids.dense(demand_tres(c, pc.demand));
  pc.partition_qos = partition_qos[static_cast<size_t>(p)];
  struct Dense : TresLookup {
    const TresIds* ids;
    const std::vector<int64_t>* v;
    int64_t get(std::string_view name) const override {
      int32_t i = ids->id(name);
      return i < 0 ? 0 : (*v)[static_cast<size_t>(i)];
    }
  } tres;
  tres.ids = &tres_ids;
  tres.v = &pc.tres;
  pc.priority_fixed = priority_terms(c, p, &pc.demand, tres).fixed;
  bool wants_gpus = pc.tres[static_cast<size_t>(tres_ids.id("gres/gpu"))] > 0;
  int32_t tasks = pc.demand.fixed_shape() ? pc.demand.tasks_per_node : 1;
  bool any = false;
  for (size_t alt = 0; alt < pc.demand.alternatives.size(); ++alt) {
    std::vector<ClassNeed> list;
    for (size_t k = 0; k < classes.size(); ++k) {
      const NodeSpec& spec = *classes[k].spec;
      if (!std::binary_search(spec.partitions.begin(), spec.partitions.end(), p)) continue;
      if (!pc.demand.alternatives[alt].matches(spec) || !node_config_fits(pc.demand, spec)) continue;
      NodeNeed need = need_on(pc.demand, spec, tasks);
      if (!need.fits) continue;
      ClassNeed cn;
      cn.cls = static_cast<int32_t>(k);
      cn.amount.reserve(2 + need.pool.size());
      cn.amount = {need.cores, need.mem_mb};
      for (int32_t v : need.pool) cn.amount.push_back(v);
      list.push_back(std::move(cn));
    }
    // Preference: lower Weight first; a job without GPUs keeps off GPU nodes
    // while other nodes can take it; then configuration order.
    std::stable_sort(list.begin(), list.end(), [&](const ClassNeed& a, const ClassNeed& b) {
      const NodeClass& x = classes[a.cls];
      const NodeClass& y = classes[b.cls];
      if (x.spec->weight != y.spec->weight) return x.spec->weight < y.spec->weight;
      if (!wants_gpus && x.has_gpus != y.has_gpus) return !x.has_gpus;
      return a.cls < b.cls;
    });
    any = any || !list.empty();
    pc.alts.push_back(std::move(list));
  }
  pc.never = !any || check_capacity(c, pc.demand).has_value();  // per node group: cheap
  shared_parts.emplace(h, made);
  return made;
}

void Scheduler::Impl::sweep_shared_parts() {
  for (auto it = shared_parts.begin(); it != shared_parts.end();) {
    it = it->second.use_count() == 1 ? shared_parts.erase(it) : std::next(it);
  }
  shared_parts_sweep_at = std::max<size_t>(1024, 2 * shared_parts.size());
}

namespace {

QueueKey key_of(const QueueEntry& e) {
  return QueueKey{-static_cast<int64_t>(e.tier), -e.priority, e.job->submit_time, e.job->id, e.job->array_task_id};
}

bool sooner(const QueueEntry& a, const QueueEntry& b) { return key_of(a) < key_of(b); }

}  // namespace

DepItemState dependency_item_state(const DepItem& it, const JobSpec& job, const JobHistory& history, Time now) {
  using DepState = DepItemState;
  // aftercorr: the element of the named array with this element's index.
  int64_t task = it.kind == DepKind::kAfterCorr && it.array_task < 0 ? job.array_task_id : it.array_task;
  JobOutcome o = history.outcome(it.job, task);
  bool ended = o.progress == JobProgress::kCompletedOk || o.progress == JobProgress::kFailed ||
               o.progress == JobProgress::kCancelled;
  switch (it.kind) {
    case DepKind::kAfter:
      if (o.progress == JobProgress::kUnknown) return DepState::kMet;
      if (o.progress == JobProgress::kPending) return DepState::kWait;
      // A job cancelled before it started counts from its cancel (its start there): `after:J+5` waits
      // 5 minutes after J's cancel, as Slurm 22.05 kept it "after:J+5(unfulfilled)" on the anchor cluster.
      return now >= o.start + it.delay ? DepState::kMet : DepState::kWait;
    case DepKind::kAfterAny:
      return o.progress == JobProgress::kUnknown || ended ? DepState::kMet : DepState::kWait;
    case DepKind::kAfterOk:
    case DepKind::kAfterCorr:
      if (o.progress == JobProgress::kUnknown || o.progress == JobProgress::kCompletedOk) return DepState::kMet;
      return ended ? DepState::kNever : DepState::kWait;
    case DepKind::kAfterNotOk:
      if (o.progress == JobProgress::kUnknown) return DepState::kMet;
      if (o.progress == JobProgress::kCompletedOk) return DepState::kNever;
      return ended ? DepState::kMet : DepState::kWait;
    case DepKind::kSingleton: break;
  }
  return DepState::kMet;
}

namespace {

using DepState = DepItemState;

DepState dep_item(const DepItem& it, const JobSpec& job, const CycleInput& in, Time now,
                  const std::set<std::pair<std::string, std::string>>& active_names,
                  const std::map<std::pair<std::string, std::string>, std::pair<Time, JobId>>& first_pending) {
  if (it.kind == DepKind::kSingleton) {
    std::pair<std::string, std::string> key{job.user, job.name};
    if (active_names.count(key)) return DepState::kWait;
    auto f = first_pending.find(key);
    if (f != first_pending.end() && f->second < std::make_pair(job.submit_time, job.id)) return DepState::kWait;
    return DepState::kMet;
  }
  return in.history ? dependency_item_state(it, job, *in.history, now) : DepState::kMet;
}

DepState dependency_state(const JobSpec& job, const CycleInput& in, Time now,
                          const std::set<std::pair<std::string, std::string>>& active,
                          const std::map<std::pair<std::string, std::string>, std::pair<Time, JobId>>& first) {
  const Dependency& dep = job.dependency;
  if (dep.empty()) return DepState::kMet;
  bool any_wait = false, any_met = false, any_never = false;
  for (const DepItem& it : dep.items) {
    DepState s = dep_item(it, job, in, now, active, first);
    any_wait |= s == DepState::kWait;
    any_met |= s == DepState::kMet;
    any_never |= s == DepState::kNever;
  }
  if (dep.any) return any_met ? DepState::kMet : (any_wait ? DepState::kWait : DepState::kNever);
  if (any_never) return DepState::kNever;
  return any_wait ? DepState::kWait : DepState::kMet;
}

// Per-cycle facts for singleton dependencies.
struct Names {
  std::set<std::pair<std::string, std::string>> active;  // running (and started this cycle)
  std::map<std::pair<std::string, std::string>, std::pair<Time, JobId>> first_pending;
  bool used = false;  // some pending job has a singleton dependency
};

bool any_singleton(const CycleInput& in) {
  for (const JobSpec* j : in.pending) {
    for (const DepItem& it : j->dependency.items) {
      if (it.kind == DepKind::kSingleton) return true;
    }
  }
  return false;
}

// Only built when some pending job waits on a singleton dependency: the
// name sets cost string copies of every job, every cycle.
Names collect_names(const CycleInput& in) {
  Names n;
  if (!any_singleton(in)) return n;
  n.used = true;
  for (const RunningJob& r : in.running) {
    if (r.spec) n.active.insert({r.spec->user, r.spec->name});
  }
  for (const JobSpec* j : in.pending) {
    auto key = std::make_pair(j->user, j->name);
    auto v = std::make_pair(j->submit_time, j->id);
    auto [it, fresh] = n.first_pending.emplace(key, v);
    if (!fresh && v < it->second) it->second = v;
  }
  return n;
}

}  // namespace

// Queue order (sooner). The jobs the last cycle ordered usually keep their
// order (priorities that do not move with time, as priority/basic's): then
// only the new jobs are sorted and merged in. Otherwise, a full sort. The
// order is the same either way (sooner is a total order).
void Scheduler::Impl::order_queue(std::vector<QueueEntry>& queue) {
  // Local scratch: what the core keeps between cycles stays small (it is
  // counted per pending job).
  std::vector<int32_t> rank_pos;
  std::vector<QueueEntry> queue_kept, queue_new;
  bool merge = last_queue_size > 0;
  if (merge) rank_pos.assign(last_queue_size, -1);
  for (size_t i = 0; i < queue.size() && merge; ++i) {
    const JobCache& jc = *queue[i].cache;
    if (jc.ranked_in != static_cast<uint32_t>(cycle_no - 1) || jc.rank >= last_queue_size) {
      queue_new.push_back(queue[i]);
    } else if (rank_pos[jc.rank] >= 0) {
      merge = false;  // one job given twice
    } else {
      rank_pos[jc.rank] = static_cast<int32_t>(i);
    }
  }
  if (merge) {
    for (int32_t pos : rank_pos) {
      if (pos >= 0) queue_kept.push_back(queue[static_cast<size_t>(pos)]);
    }
    merge = std::is_sorted(queue_kept.begin(), queue_kept.end(), sooner);
  }
  if (merge) {
    std::sort(queue_new.begin(), queue_new.end(), sooner);
    std::merge(queue_kept.begin(), queue_kept.end(), queue_new.begin(), queue_new.end(), queue.begin(), sooner);
  } else {
    std::sort(queue.begin(), queue.end(), sooner);
  }
  for (size_t i = 0; i < queue.size(); ++i) {
    queue[i].cache->rank = static_cast<uint32_t>(i);
    queue[i].cache->ranked_in = static_cast<uint32_t>(cycle_no);
  }
  last_queue_size = static_cast<uint32_t>(queue.size());
}

CycleResult Scheduler::Impl::run(const CycleInput& input, const CycleOptions& opts) {
  ++cycle_no;
  setup(input);
  CycleResult out;
  out.stats.pending = static_cast<int64_t>(input.pending.size());

  std::vector<QueueEntry> queue;
  queue.reserve(input.pending.size());
  for (const JobSpec* job : input.pending) queue.push_back(entry(*job, input.fairshare, now));
  order_queue(queue);
  out.pending.reserve(queue.size());

  bool full = opts.pass == PassKind::kFull;
  bool fcfs = c.sched.policy == QueuePolicy::kFcfs || !full;
  int64_t test_limit = full ? c.sched.bf_max_job_test : c.sched.default_queue_depth;
  if (test_limit == kNoLimit || test_limit < 0) test_limit = INT64_MAX;
  searches_before_index = std::min<int64_t>(test_limit, static_cast<int64_t>(queue.size())) >= kLongQueue
                              ? kSearchesBeforeIndexLongQueue
                              : kSearchesBeforeIndexShortQueue;
  int64_t depth = c.sched.bf_reserve_depth == kNoLimit ? INT64_MAX : c.sched.bf_reserve_depth;
  if (c.sched.policy == QueuePolicy::kFcfs) depth = INT64_MAX;

  Names names = collect_names(input);
  collect_node_users(input);
  std::vector<uint8_t> part_waiting(c.partitions.size(), 0);
  std::vector<Time> part_block_start(c.partitions.size(), kNoPlan);  // FCFS: a job waits here from then
  std::vector<uint8_t> class_waiting(classes.size(), 0);
  if (const WalkWaiting* w = input.waiting) {  // an earlier walk carried on
    if (w->partitions.size() == part_waiting.size()) part_waiting = w->partitions;
    if (w->classes.size() == class_waiting.size()) class_waiting = w->classes;
  }
  int64_t reservations = 0;
  int64_t tested = 0;
  // FCFS without plans behind a blocked queue (CycleOptions::plan_behind_blocked).
  const bool skip_when_blocked = !opts.plan_behind_blocked && c.sched.policy == QueuePolicy::kFcfs;
  // The partitions the queue's jobs may run in; once each is blocked, so is the queue.
  std::vector<uint8_t> used(c.partitions.size(), 0);
  if (input.queue_partitions.size() == used.size()) {
    used.assign(input.queue_partitions.begin(), input.queue_partitions.end());
  } else {
    for (const QueueEntry& qe : queue) {
      for (const auto& pc : qe.cache->parts) used[static_cast<size_t>(pc->partition)] |= !pc->never;
    }
  }
  const auto n_parts = static_cast<size_t>(std::count(used.begin(), used.end(), 1));
  size_t blocked_parts = 0;  // of those, the partitions whose part_block_start is set
  auto block = [&](int32_t part, Time at) {
    Time& b = part_block_start[static_cast<size_t>(part)];
    if (b == kNoPlan && used[static_cast<size_t>(part)]) ++blocked_parts;
    b = b == kNoPlan ? at : std::max(b, at);
  };
  if (any_closed || closed_now.size() != c.nodes.size()) closed_now.assign(c.nodes.size(), 0);
  any_closed = false;
  // FCFS: what a job left waiting holds back (see closed_now).
  auto hold_back = [&](const PartChoice& pc, Time at) {
    if (pc.demand.required.empty()) {
      block(pc.partition, at);
      return;
    }
    for (NodeIndex n : pc.demand.required) closed_now[static_cast<size_t>(n)] = 1;
    any_closed = true;
  };

  // Nothing further back can start, reserve or move a reservation.
  auto settled = [&] { return tested >= test_limit || (blocked_parts == n_parts && (!full || skip_when_blocked)); };

  // The last reservation, while no search has needed it in the profiles.
  // A reservation only takes resources from its start on, which is later
  // than now: a search for a start now that does not touch its nodes after
  // that start finds the same placement with or without it (the choice
  // among nodes does not depend on it). So it goes into the profiles when
  // a search for a later start comes, or a start now would touch it (that
  // search is then made again), and not at all when neither comes.
  // When it takes every core of each of its nodes, a start now that would
  // run past its start simply passes over those nodes (held_off), as it
  // would over nodes with no core free then.
  struct Deferred {
    const PartChoice* pc = nullptr;
    Placement p;
    Time end = 0;
    size_t plan = 0;        // its PendingPlan in out.pending
    uint32_t mark = 0;      // held_off stamp of its nodes; 0: not every core of them
  };
  std::optional<Deferred> deferred;
  std::optional<Placement> now_fit, later;  // each job's, kept out of the loop (cleared, not built, per job)
  auto commit_deferred = [&] {
    if (!deferred) return;
    commit(*deferred->pc, deferred->p, deferred->end);
    out.pending[deferred->plan].nodes = std::move(deferred->p.nodes);
    deferred.reset();
  };
  auto defer = [&](const PartChoice& pc, Placement&& p, Time end) {
    deferred = Deferred{&pc, std::move(p), end, out.pending.size(), 0};
    Placement& d = deferred->p;
    bool whole = true;
    for (size_t i = 0; i < d.nodes.size() && whole; ++i) {
      whole = d.amount(i)[0] >= classes[class_of[d.nodes[i]]].capacity[0];
    }
    if (!whole) return;
    if (held_off_mark.size() != c.nodes.size()) held_off_mark.assign(c.nodes.size(), 0);
    if (++held_off_stamp == 0) {  // wrapped: no stale mark may match
      std::fill(held_off_mark.begin(), held_off_mark.end(), 0);
      held_off_stamp = 1;
    }
    for (NodeIndex n : d.nodes) held_off_mark[static_cast<size_t>(n)] = held_off_stamp;
    deferred->mark = held_off_stamp;
  };
  // Whether a job starting now on `fit` holds a node of the deferred
  // reservation (ask only for a job that runs past its start).
  auto touches_deferred = [&](const Placement& fit) {
    const std::vector<NodeIndex>& held = deferred->p.nodes;
    return std::any_of(fit.nodes.begin(), fit.nodes.end(),
                       [&](NodeIndex n) { return std::find(held.begin(), held.end(), n) != held.end(); });
  };
  for (const QueueEntry& qe : queue) {
    if (out.stats.settled < 0 && settled()) out.stats.settled = static_cast<int64_t>(out.pending.size() + out.starts.size());
    const JobSpec& job = *qe.job;
    PendingPlan plan;
    plan.job = &job;
    plan.priority = qe.priority;
    if (tested >= test_limit) {
      out.pending.push_back(std::move(plan));
      continue;
    }
    ++tested;
    plan.tested = true;
    const JobCache& jc = *qe.cache;
    if (!jc.parts.empty()) plan.partition = jc.parts.front()->partition;
    if (job.hold != Hold::kNone) {  // held shows first, as Slurm's, even for a job no node can hold
      plan.reason = job.hold == Hold::kUser ? Reason::kJobHeldUser : Reason::kJobHeldAdmin;
      out.pending.push_back(std::move(plan));
      continue;
    }
    if (jc.refused) {
      plan.reason = Reason::kBadConstraints;
      plan.never = true;
      out.pending.push_back(std::move(plan));
      continue;
    }
    if (job.begin_time > now) {
      plan.reason = Reason::kBeginTime;
      plan.start = job.begin_time;
      out.pending.push_back(std::move(plan));
      continue;
    }
    DepState dep = dependency_state(job, input, now, names.active, names.first_pending);
    if (dep != DepState::kMet) {
      plan.reason = dep == DepState::kWait ? Reason::kDependency : Reason::kDependencyNeverSatisfied;
      plan.never = dep == DepState::kNever;
      out.pending.push_back(std::move(plan));
      continue;
    }
    if (&job == explain_target && explain_out) {
      commit_deferred();
      describe(job, jc, *explain_out);
    }

    Reason first_reason = Reason::kNone;
    bool never_everywhere = true;
    const PartChoice* tried = nullptr;
    now_fit.reset();
    const PartChoice* now_pc = nullptr;
    later.reset();
    const PartChoice* later_pc = nullptr;
    bool planned_any = false;  // a plan was looked for (and so "none" means none within the window)
    for (const auto& part : jc.parts) {
      const PartChoice& pc = *part;
      if (pc.never) {
        if (first_reason == Reason::kNone) first_reason = Reason::kBadConstraints;
        continue;
      }
      never_everywhere = false;
      Reason r = pc.static_reason;
      if (r == Reason::kNone && job.array_max_running > 0 &&
          limits.array_running(job.array_job_id) >= job.array_max_running) {
        r = Reason::kJobArrayTaskLimit;
      }
      if (r == Reason::kNone) {
        r = limits.check(pc.demand.qos, pc.partition_qos, job.user, pc.demand.assoc, pc.tres);
      }
      if (r != Reason::kNone) {
        if (first_reason == Reason::kNone) first_reason = r;
        continue;
      }
      if (!tried) tried = &pc;
      bool blocked = fcfs && part_block_start[pc.partition] != kNoPlan;
      if (!blocked) {
        const bool past = deferred && round_up(sat_add(now, duration(pc))) > deferred->p.start;
        held_off = past ? deferred->mark : 0;
        now_fit = start_now(pc, job);
        held_off = 0;
        if (now_fit && past && touches_deferred(*now_fit)) {
          commit_deferred();
          now_fit = start_now(pc, job);
        }
        if (now_fit) {
          now_pc = &pc;
          break;
        }
      }
      bool reserve = reservations < depth && !(pc.demand.qos >= 0 && c.qos[pc.demand.qos].no_reserve);
      if (full && (reserve || opts.estimate_unreserved) && !(skip_when_blocked && blocked_parts == n_parts)) {
        planned_any = true;
        Time not_before = fcfs && part_block_start[pc.partition] != kNoPlan ? part_block_start[pc.partition] : now;
        commit_deferred();
        std::optional<Placement> p;
        FirstReservation& fr = first_reservation;
        const bool first = reserve && have_base && commits == 0 && not_before == now;
        if (first && fr.job == &job && fr.revision == job.revision && fr.pc == &pc &&
            fr.kept_version == kept_version && fr.searched_at <= now && now <= fr.p.start) {
          p = fr.p;
        } else {
          p = not_before >= kForever ? std::nullopt : plan_later(pc, job, reserve, not_before);
          if (first) {
            fr = p ? FirstReservation{&job, job.revision, &pc, now, kept_version, *p} : FirstReservation{};
          }
        }
        if (p && (!later || p->start < later->start)) {
          later = std::move(p);
          later_pc = &pc;
        }
      }
    }

    if (now_fit) {
      Time d = duration(*now_pc);
      StartDecision sd;
      sd.job = &job;
      sd.partition = now_pc->partition;
      sd.qos = now_pc->demand.qos;
      sd.alloc = allocate(*now_pc, *now_fit);
      sd.time_limit = now_pc->demand.time_limit;
      sd.end = sat_add(now, d);
      sd.priority = qe.priority;
      bool backfilled = false;
      for (NodeIndex n : now_fit->nodes) backfilled = backfilled || class_waiting[class_of[n]];
      sd.kind = backfilled && !fcfs ? StartKind::kBackfilled : StartKind::kImmediate;
      commit(*now_pc, *now_fit, round_up(sat_add(now, d)));
      HeldLimits scratch;
      HeldLimits& la = have_base ? cycle_limit_adds.emplace_back() : scratch;
      limits_of(&job, sd.qos, sd.partition, sd.alloc, la);
      count_limits(la, +1);
      if (names.used) names.active.insert({job.user, job.name});
      add_node_users(now_fit->nodes, job, user_exclusive(job, sd.partition), now, round_up(sat_add(now, d)));
      ++out.stats.started;
      if (sd.kind == StartKind::kBackfilled) ++out.stats.backfilled;
      if (reservations > 0) ++out.stats.started_behind_reservation;
      out.starts.push_back(std::move(sd));
      continue;
    }

    if (!tried) {
      plan.reason = first_reason;
      plan.never = never_everywhere;
      out.pending.push_back(std::move(plan));
      continue;
    }
    const PartChoice& shown = later_pc ? *later_pc : *tried;
    plan.partition = shown.partition;
    plan.reason = part_waiting[shown.partition] ? Reason::kPriority : Reason::kResources;
    for (const auto& part : jc.parts) {
      const PartChoice& pc = *part;
      part_waiting[pc.partition] = 1;
      for (const auto& alt : pc.alts) {
        for (const ClassNeed& cn : alt) class_waiting[cn.cls] = 1;
      }
    }
    if (later) {
      plan.start = later->start;
      bool reserve = reservations < depth && !(shown.demand.qos >= 0 && c.qos[shown.demand.qos].no_reserve);
      if (fcfs) hold_back(shown, later->start);
      const Time end = round_up(sat_add(later->start, duration(shown)));
      bool deferring = false;
      if (reserve) add_node_users(later->nodes, job, user_exclusive(job, shown.partition), later->start, end);
      if (reserve) {
        // Once the walk is settled no later search reads the profiles: the
        // reservation is the plan's alone.
        if (!settled() && later->start > now) {
          defer(shown, std::move(*later), end);
          deferring = true;
        } else if (!settled()) {
          commit(shown, *later, end);
        }
        plan.reserved = true;
        ++reservations;
      }
      if (!deferring) plan.nodes = std::move(later->nodes);  // the placement is not needed past here
    } else if (planned_any) {
      ++out.stats.beyond_window;
      if (fcfs) hold_back(shown, kForever);
    } else if (fcfs && part_block_start[shown.partition] == kNoPlan) {
      hold_back(shown, now);
    }
    out.pending.push_back(std::move(plan));
  }
  if (deferred) out.pending[deferred->plan].nodes = std::move(deferred->p.nodes);  // never needed in the profiles

  // Forget jobs no longer pending, once they are an eighth of the pending
  // ones (or 1,024): a walk over the whole cache every cycle would cost as
  // much as the queue itself. (An entry is only used for the same job at
  // the same revision, so one kept a while longer is never wrong.)
  // The demands only those jobs held go with them.
  const size_t queued = std::max(input.pending.size(), input.queue_length);
  if (cache.size() > queued + std::max<size_t>(1024, queued / 8)) {
    for (auto it = cache.begin(); it != cache.end();) {
      it = it->second.seen == static_cast<uint32_t>(cycle_no) ? std::next(it) : cache.erase(it);
    }
    sweep_shared_parts();
  } else if (shared_parts.size() > shared_parts_sweep_at) {
    sweep_shared_parts();  // jobs whose requests changed left theirs behind
  }
  if (out.stats.settled < 0 && settled()) out.stats.settled = static_cast<int64_t>(queue.size());
  if (opts.report_waiting) {
    out.waiting.partitions = std::move(part_waiting);
    out.waiting.classes = std::move(class_waiting);
  }
  out.stats.demands = static_cast<int64_t>(shared_parts.size());
  out.stats.tested = tested;
  out.stats.reserved = reservations;
  for (const PendingPlan& p : out.pending) {
    bool definite = p.reason != Reason::kResources && p.reason != Reason::kPriority && p.reason != Reason::kNone;
    if (p.tested && (p.start != kNoPlan || definite)) ++out.stats.planned;
  }
  for (const NodeProfile& p : prof) out.stats.profile_steps += static_cast<int64_t>(p.steps());
  for (size_t k = 0; k < index.size(); ++k) {
    if (!index_built[k]) continue;
    out.stats.index_visits += index[k].visits() + exhaustive_visits[k];
    out.stats.rise_checks += index[k].rise_checks();
  }
  return out;
}

// ---------------------------------------------------------------- Scheduler

Scheduler::Scheduler(const Cluster& cluster) : impl_(std::make_unique<Impl>(cluster)) {}
Scheduler::~Scheduler() = default;

const Cluster& Scheduler::cluster() const { return impl_->c; }

CycleResult Scheduler::run_cycle(const CycleInput& in, const CycleOptions& opts) { return impl_->run(in, opts); }

QueuePlace Scheduler::queue_place(const JobSpec& job, Time now, const FairShareFactors* fs) {
  QueueEntry e = impl_->entry(job, fs, now);
  QueuePlace p;
  p.key = key_of(e);
  for (const auto& pc : e.cache->parts) {
    if (!pc->never) p.partitions.push_back(pc->partition);
  }
  p.can_run = !p.partitions.empty();
  return p;
}

void Scheduler::use_reference_search(bool on) { impl_->reference_search = on; }

void Scheduler::set_index_threshold(size_t nodes) { impl_->small_class = nodes; }

}  // namespace drover::core
