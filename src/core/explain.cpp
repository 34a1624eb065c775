// Scheduler::explain: why one pending job is not running, node group by
// node group, from the state the cycle is in when the walk reaches it (so
// resources held for higher-priority jobs count, as they do for the job).
#include <algorithm>
#include <string>

#include "common/duration.hpp"
#include "common/hostlist.hpp"
#include "common/units.hpp"
#include "core/cycle.hpp"

namespace drover::core {

namespace {

std::string when(Time t, Time now) {
  if (t <= now) return "now";
  return format_timestamp(t) + " (in " + format_duration(t - now) + ")";
}

std::string group_name(const Cluster& c, const NodeClass& cls) {
  std::vector<std::string> names;
  for (NodeIndex n : cls.members) names.push_back(c.nodes[n].name);
  return hostlist_compress_sorted(names);
}

std::string shape(const NodeSpec& n) {
  std::string s = std::to_string(n.cpus) + " CPUs, " + format_memory_mb(n.mem_mb);
  for (const GresPool& g : n.gres) s += ", " + std::to_string(g.count) + "x" + g.name + (g.type.empty() ? "" : ":" + g.type);
  return s;
}

std::string need_text(const ClassNeed& cn, const NodeSpec& spec) {
  std::string s = std::to_string(cn.amount[0] * std::max(1, spec.threads_per_core)) + " CPUs, " +
                  format_memory_mb(cn.amount[1]);
  for (size_t p = 0; p < spec.gres.size(); ++p) {
    if (cn.amount[2 + p] > 0) s += ", " + std::to_string(cn.amount[2 + p]) + "x" + spec.gres[p].name +
                                  (spec.gres[p].type.empty() ? "" : ":" + spec.gres[p].type);
  }
  return s;
}

// What is short on the best node of a class now, e.g. "only 4 free GPUs".
std::string shortfall(const Scheduler::Impl& s, const NodeClass& cls, const std::vector<int64_t>& need) {
  std::vector<int64_t> best(need.size(), 0);
  for (NodeIndex n : cls.members) {
    const int64_t* f = s.prof[n].free_at(s.now);
    for (size_t k = 0; k < need.size(); ++k) best[k] = std::max(best[k], f[k]);
  }
  std::vector<std::string> parts;
  int32_t threads = std::max(1, cls.spec->threads_per_core);
  if (best[0] < need[0]) parts.push_back("at most " + std::to_string(best[0] * threads) + " free CPUs on a node (needs " +
                                         std::to_string(need[0] * threads) + ")");
  if (best[1] < need[1]) parts.push_back("at most " + format_memory_mb(std::max<int64_t>(best[1], 0)) +
                                         " free memory on a node (needs " + format_memory_mb(need[1]) + ")");
  for (size_t k = 2; k < need.size(); ++k) {
    if (best[k] < need[k]) {
      const GresPool& g = cls.spec->gres[k - 2];
      parts.push_back("only " + std::to_string(std::max<int64_t>(best[k], 0)) + " free " +
                      (g.name == "gpu" ? "GPUs" : g.name) + " on a node (needs " + std::to_string(need[k]) + ")");
    }
  }
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

}  // namespace

void Scheduler::Impl::describe(const JobSpec& job, const JobCache& jc, Explanation& ex) {
  for (const auto& shared : jc.parts) {
    const PartChoice& pc = *shared;
    const PartitionSpec& part = c.partitions[pc.partition];
    std::string head = "partition " + part.name + ":";
    if (pc.static_reason != Reason::kNone) {
      ex.lines.push_back(head + " waits on " + std::string(reason_name(pc.static_reason)) + " (a limit of the partition, QOS or association; it " +
                         "does not pass while the configuration stays as it is)");
      continue;
    }
    int32_t part_qos = c.find_qos(part.qos);
    Reason lr = limits.check(pc.demand.qos, part_qos, job.user, pc.demand.assoc, pc.tres);
    if (lr != Reason::kNone) {
      ex.lines.push_back(head + " waits on " + std::string(reason_name(lr)) + ": running jobs use the " +
                         (is_association_limit(lr) ? "association's" : "QOS's") + " share now");
    }
    Time d = duration(pc);
    int32_t k = pc.demand.min_nodes;
    ex.lines.push_back(head + " the job needs " + std::to_string(k) + " node" + (k == 1 ? "" : "s") + " for " +
                       (d >= kForever ? std::string("an unlimited time") : format_duration(d)));
    std::vector<bool> listed(classes.size(), false);
    for (size_t alt = 0; alt < pc.alts.size(); ++alt) {
      for (const ClassNeed& cn : pc.alts[alt]) {
        listed[cn.cls] = true;
        const NodeClass& cls = classes[cn.cls];
        int32_t free_now = 0, instant = 0;
        Time earliest = kNever;
        for (NodeIndex n : cls.members) {
          if (avail[n] != NodeAvail::kUp) continue;
          if (prof[n].fits(cn.amount.data(), now, now + 1)) ++instant;
          if (prof[n].fits(cn.amount.data(), now, d >= kForever ? kForever : now + d)) ++free_now;
          earliest = std::min(earliest, prof[n].earliest_fit(cn.amount.data(), d, now, window_end()));
        }
        int32_t down = static_cast<int32_t>(std::count_if(cls.members.begin(), cls.members.end(),
                                                          [&](NodeIndex n) { return avail[n] != NodeAvail::kUp; }));
        std::string line = "  nodes " + group_name(c, cls) + " (" + shape(*cls.spec) + "), the job takes " +
                           need_text(cn, *cls.spec) + " on each: ";
        if (free_now >= k) {
          line += std::to_string(free_now) + " can take it now";
        } else if (instant > free_now) {
          line += std::to_string(instant) + " free now, but held from " + when(now + 1, now) +
                  " on for higher-priority jobs before the job would end";
        } else {
          std::string why = shortfall(*this, cls, cn.amount);
          line += why.empty() ? std::to_string(free_now) + " of " + std::to_string(k) + " needed free now" : why;
          line += "; busy until " + (earliest == kNever ? std::string("after the planning window") : when(earliest, now)) +
                  " for one node";
        }
        if (down > 0) line += "; " + std::to_string(down) + " not available (down or drained)";
        ex.lines.push_back(line);
      }
    }
    for (size_t k2 = 0; k2 < classes.size(); ++k2) {
      const NodeClass& cls = classes[k2];
      if (listed[k2] || !std::binary_search(cls.spec->partitions.begin(), cls.spec->partitions.end(), pc.partition)) continue;
      std::string why;
      bool feature_ok = std::any_of(pc.demand.alternatives.begin(), pc.demand.alternatives.end(),
                                    [&](const Constraint& a) { return a.matches(*cls.spec); });
      if (!feature_ok) {
        why = "lack the features \"" + pc.demand.alternatives.front().text() + "\"";
      } else {
        why = "can never hold one node's share of the job";
      }
      ex.lines.push_back("  nodes " + group_name(c, cls) + " (" + shape(*cls.spec) + "): " + why);
    }
  }
}

Explanation Scheduler::explain(const CycleInput& in, const JobSpec& job) {
  Explanation ex;
  impl_->explain_target = &job;
  impl_->explain_out = &ex;
  CycleResult r = impl_->run(in, CycleOptions{PassKind::kFull});
  impl_->explain_target = nullptr;
  impl_->explain_out = nullptr;
  for (const StartDecision& s : r.starts) {
    if (s.job == &job) ex.lines.push_back("it can start now");
  }
  for (const PendingPlan& p : r.pending) {
    if (p.job != &job) continue;
    std::string reason(reason_name(p.reason));
    std::string line = "reason: " + reason;
    if (p.start != kNoPlan && p.reason != Reason::kBeginTime) {
      line += "; planned start " + when(p.start, in.now) + (p.reserved ? ", resources held for it" : "");
      if (!p.nodes.empty()) {
        std::vector<std::string> names;
        for (NodeIndex n : p.nodes) names.push_back(impl_->c.nodes[n].name);
        line += " on " + hostlist_compress_sorted(names);
      }
    } else if (p.reason == Reason::kBeginTime) {
      line += "; it may start from " + when(p.start, in.now);
    } else if (p.reason == Reason::kResources || p.reason == Reason::kPriority) {
      line += "; no start within the planning window (bf_window " + format_duration(impl_->window) + ")";
    }
    if (p.never) line += "; it can never run as the cluster is configured";
    ex.lines.push_back(line);
  }
  if (ex.lines.empty()) ex.lines.push_back("the job is not pending");
  return ex;
}

}  // namespace drover::core
