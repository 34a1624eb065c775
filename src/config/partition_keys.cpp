// PartitionName= line keys, declared as data (see key_table.hpp).
#include <cctype>

#include "common/hostlist.hpp"
#include "common/strings.hpp"
#include "config/key_values.hpp"
#include "config/tables.hpp"

namespace drover::config {
namespace {

using P = PartitionConfig;
using namespace keys;

const char* const kPassivePartitionKeys[] = {
    "Alternate", "CpuBind", "LLN",
    "ReqResv", "ResumeTimeout", "SelectTypeParameters", "SuspendTime",
    "SuspendTimeout",
};

KeyDef<P> nodes() {
  KeyDef<P> d;
  d.name = "Nodes";
  d.values = "host list such as gpu[01-32],cpu[01-16], NodeSet names (NodeSet=NAME Nodes=... and/or Feature=...), or ALL";
  d.doc = "Nodes of the partition; ALL: every node defined in slurm.conf.";
  d.parse = [](P& p, std::string_view s, ValueContext&) -> Status {
    p.nodes_expr = std::string(s);  // expanded once every node is known
    return {};
  };
  d.show = [](const P& p) { return p.nodes_expr; };
  return d;
}

// TRESBillingWeights=CPU=1.0,Mem=0.25G,GRES/gpu=2.0: a weight per unit of
// each TRES; a K, M, G, T or P after it makes it a weight per that many of
// the TRES's unit, megabytes for memory (slurm.conf(5): Mem=0.25G bills
// 8 GB as 2). Negative weights are allowed, as in Slurm.
KeyDef<P> tres_billing_weights() {
  KeyDef<P> d;
  d.name = "TRESBillingWeights";
  d.values = "comma-separated TRES=weight[K|M|G|T|P], e.g. CPU=1.0,Mem=0.25G,GRES/gpu=2.0";
  d.doc = "How a job's TRES add up to its billing TRES (sacct's AllocTRES billing=, fair-share usage, "
          "billing limits): the sum of each TRES times its weight (PriorityFlags=MAX_TRES: the largest of cpu, "
          "mem, node and gres plus the sum of the others); unset: the job's CPUs.";
  d.parse = [](P& p, std::string_view s, ValueContext&) -> Status {
    std::map<std::string, double> out;
    for (const auto& item : split(s, ',')) {
      const auto eq = item.find('=');
      const std::string name = eq == std::string::npos ? std::string() : canonical_tres_name(item.substr(0, eq));
      std::string value = eq == std::string::npos ? std::string() : item.substr(eq + 1);
      double per = 1.0;  // units of the TRES (megabytes for memory) the weight is given for
      const char suffix = value.empty() ? '\0' : static_cast<char>(std::toupper(static_cast<unsigned char>(value.back())));
      if (suffix != '\0' && std::string_view("KMGTP").find(suffix) != std::string_view::npos) {
        per = in_unit(1.0, suffix, 'M');
        value.pop_back();
      }
      auto w = value.empty() ? Result<double>(make_error("")) : parse_real_value(value, -1e15, 1e15);
      if (name.empty() || !w) {
        return make_error("expected comma-separated TRES=weight items such as CPU=1.0,Mem=0.25G,GRES/gpu=2.0 (bad item \"" +
                          item + "\")");
      }
      if (out.count(name)) return make_error("TRES " + name + " is given twice");
      out[name] = *w / per;
    }
    p.tres_billing = std::move(out);
    p.tres_billing_weights = std::string(s);
    return {};
  };
  d.show = [](const P& p) { return p.tres_billing_weights; };
  return d;
}

// AllocNodes=login[01-02],vm: where jobs of the partition may be submitted from.
KeyDef<P> alloc_nodes() {
  return bind_field<P>(
      "AllocNodes", "a hostlist expression, or ALL",
      "Hosts jobs may be submitted from to run here; from others they are refused (Access/permission denied).",
      &P::alloc_nodes,
      [](std::string_view s) -> Result<std::string> {
        if (iequals(s, "ALL")) return std::string();
        auto hosts = hostlist_expand(s);
        if (!hosts) return make_error("expected a hostlist expression (login[01-02],vm) or ALL: " + hosts.error().message);
        return std::string(s);
      },
      [](const std::string& v) { return v.empty() ? std::string("ALL") : v; });
}

// Slurm's older single partition priority, still read by Slurm 22.05: it sets both PriorityJobFactor and
// PriorityTier. The effective values show under those two names.
KeyDef<P> legacy_priority() {
  KeyDef<P> d;
  d.name = "Priority";
  d.values = int_range_text(0, 65533, false);
  d.doc = "Older spelling that sets both PriorityJobFactor and PriorityTier to its value.";
  d.parse = [](P& p, std::string_view s, ValueContext&) -> Status {
    auto v = parse_int_value(s, 0, 65533, false);
    if (!v) return v.error();
    p.priority_tier = static_cast<decltype(p.priority_tier)>(*v);
    p.priority_job_factor = static_cast<decltype(p.priority_job_factor)>(*v);
    return {};
  };
  d.show = [](const P&) { return std::string(); };
  return d;
}

// NO | YES[:N] | FORCE[:N] | EXCLUSIVE (Shared= is Slurm's older name).
KeyDef<P> oversubscribe() {
  KeyDef<P> d;
  d.name = "OverSubscribe";
  d.aliases = {"Shared"};
  d.values = "NO, YES[:N], FORCE[:N] or EXCLUSIVE";
  d.doc = "Whether jobs may share nodes' resources; EXCLUSIVE gives every job whole nodes.";
  d.parse = [](P& p, std::string_view s, ValueContext&) -> Status {
    const char* kExpected = "expected NO, YES, YES:N, FORCE, FORCE:N or EXCLUSIVE (N from 1 to 65535)";
    std::string up = to_upper(s);
    auto colon = up.find(':');
    std::string word = up.substr(0, colon);
    if (word == "NO" || word == "EXCLUSIVE") {
      if (colon != std::string::npos) return make_error(kExpected);
    } else if (word == "YES" || word == "FORCE") {
      if (colon != std::string::npos && !parse_int_value(up.substr(colon + 1), 1, 65535, false)) {
        return make_error(kExpected);
      }
    } else {
      return make_error(kExpected);
    }
    p.oversubscribe = up;
    return {};
  };
  d.show = [](const P& p) { return p.oversubscribe; };
  return d;
}

std::vector<KeyDef<P>> make_partition_keys() {
  const int64_t kMaxNodes = 1 << 22;
  return key_defs<P>(
      line_head<P>("PartitionName", "name, or DEFAULT",
                   "Starts a partition line. PartitionName=DEFAULT sets defaults for the partition lines after it."),
      nodes(),
      yes_no<P>("Default", &P::is_default, "YES: jobs that name no partition go here."),
      time_limit<P>("MaxTime", &P::max_time, "Longest time limit a job may have here."),
      defaults_to(time_limit_opt<P>("DefaultTime", &P::default_time, "Time limit of jobs that give none."), "MaxTime"),
      integer<P>("MaxNodes", &P::max_nodes, 0, kMaxNodes, "Most nodes one job may use here.", true),
      integer<P>("MinNodes", &P::min_nodes, 0, kMaxNodes, "Fewest nodes one job may ask for here."),
      choice<P>("State", &P::state, {"UP", "DOWN", "DRAIN", "INACTIVE"},
                "UP: accepts and runs jobs; DOWN: accepts, runs none; DRAIN: runs, accepts none; INACTIVE: neither."),
      integer<P>("PriorityTier", &P::priority_tier, 0, 65533,
                 "Jobs of a higher tier are scheduled first, whatever their priority."),
      integer<P>("PriorityJobFactor", &P::priority_job_factor, 0, 65533,
                 "The partition factor of multifactor priority (normalised by the largest)."),
      legacy_priority(),
      preempt_mode<P>(&P::preempt_mode,
                      "How jobs of this partition are preempted under preempt/partition_prio (unset: the cluster's "
                      "PreemptMode): CANCEL, REQUEUE or OFF (never).",
                      false),
      grace_time<P>(&P::grace_time,
                    "Under preempt/partition_prio, a preempted job of this partition gets SIGTERM at once and is "
                    "requeued or cancelled this long after."),
      optional_integer<P>("OverTimeLimit", &P::over_time_limit, 0, 65533,
                          "Minutes a job of this partition may run past its time limit before it ends TIMEOUT "
                          "(unset: the cluster's OverTimeLimit).",
                          true),
      oversubscribe(),
      text<P>("QOS", &P::qos, "QOS whose limits also apply to every job of the partition.", "QOS name"),
      name_list<P>("AllowQos", &P::allow_qos, "QOS that may run here.", true),
      name_list<P>("DenyQos", &P::deny_qos, "QOS that may not run here."),
      name_list<P>("AllowAccounts", &P::allow_accounts, "Accounts that may run here.", true),
      name_list<P>("DenyAccounts", &P::deny_accounts, "Accounts that may not run here."),
      name_list<P>("AllowGroups", &P::allow_groups,
                   "Unix groups whose members may run here (root always may); others' jobs are refused (User's "
                   "group not permitted to use this partition).",
                   true),
      yes_no<P>("RootOnly", &P::root_only, "YES: only root's jobs run here; others are refused (Access/permission denied)."),
      yes_no<P>("DisableRootJobs", &P::disable_root_jobs, "YES: root's jobs are refused here (Invalid user id)."),
      alloc_nodes(),
      yes_no<P>("ExclusiveUser", &P::exclusive_user, "YES: a node runs jobs of one user at a time."),
      memory_mb<P>("DefMemPerCPU", &P::def_mem_per_cpu_mb, "Memory per CPU for jobs that ask for none; overrides the global."),
      memory_mb<P>("DefMemPerGPU", &P::def_mem_per_gpu_mb, "Memory per GPU for jobs that ask for none; overrides the global."),
      memory_mb<P>("DefMemPerNode", &P::def_mem_per_node_mb, "Memory per node for jobs that ask for none."),
      memory_mb<P>("MaxMemPerCPU", &P::max_mem_per_cpu_mb, "Most memory per allocated CPU."),
      memory_mb<P>("MaxMemPerNode", &P::max_mem_per_node_mb, "Most memory per node."),
      optional_integer<P>("DefCpuPerGPU", &P::def_cpu_per_gpu, 1, 1 << 20,
                          "CPUs per allocated GPU for jobs that ask for none; overrides the global."),
      integer<P>("MaxCPUsPerNode", &P::max_cpus_per_node, 1, 1 << 20,
                 "Most CPUs of a node that jobs of this partition may use together.", true),
      yes_no<P>("Hidden", &P::hidden, "YES: not listed unless asked for (sinfo -a)."),
      tres_billing_weights()
  );
}

}  // namespace

const KeyTable<PartitionConfig>& partition_keys() {
  // Never destroyed: a command would otherwise spend its exit taking it apart.
  static const KeyTable<PartitionConfig>& table =
      *new KeyTable<PartitionConfig>("PartitionName", make_partition_keys(), passive_keys(kPassivePartitionKeys));
  return table;
}

}  // namespace drover::config
