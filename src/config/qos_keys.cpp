// qos.conf keys (the seed's format: one QOS per line, sacctmgr's option
// names), declared as data (see key_table.hpp).
#include <algorithm>

#include "common/strings.hpp"
#include "config/key_values.hpp"
#include "config/tables.hpp"

namespace drover::config {
namespace {

using Q = QosConfig;
using namespace keys;

const std::vector<std::string> kFlags = {
    "DenyOnLimit",       "NoReserve",          "EnforceUsageThreshold", "NoDecay",
    "OverPartQOS",       "PartitionMaxNodes",  "PartitionMinNodes",     "PartitionTimeLimit",
    "RequiresReservation", "UsageFactorSafe",
};

// sacctmgr QOS options that Drover accepts without acting on.
const char* const kPassiveQosKeys[] = {
    "GrpTRESMins", "GrpTRESRunMins", "GrpWall", "LimitFactor", "MaxJobsAccruePerAccount",
    "MaxJobsAccruePerUser", "MaxJobsPerAccount", "MaxSubmitJobsPerAccount", "MaxTRESMinsPerJob",
    "MaxTRESPerAccount", "MaxTRESRunMinsPerAccount", "MaxTRESRunMinsPerUser", "MinPrioThreshold",
    "MinTRESPerJob", "UsageThreshold", "MaxTRESMins",
};

KeyDef<Q> flags() {
  KeyDef<Q> d = flag_list<Q>("Flags", &Q::flags, kFlags,
                             "DenyOnLimit: reject at submission a job over a limit; NoReserve: backfill makes no "
                             "reservation for it.");
  d.parse = [inner = d.parse](Q& q, std::string_view s, ValueContext& ctx) -> Status {
    if (auto st = inner(q, s, ctx); !st) return st;
    q.deny_on_limit = std::find(q.flags.begin(), q.flags.end(), "DenyOnLimit") != q.flags.end();
    q.no_reserve = std::find(q.flags.begin(), q.flags.end(), "NoReserve") != q.flags.end();
    return {};
  };
  return d;
}

std::vector<KeyDef<Q>> make_qos_keys() {
  const int64_t kMaxJobs = 100000000;
  return key_defs<Q>(
      line_head<Q>("Name", "QOS name",
                   "Starts a QOS definition (one per line)."),
      integer<Q>("Priority", &Q::priority, 0, 4294967295LL, "QOS priority (the QOS factor of multifactor)."),
      tres<Q>("GrpTRES", &Q::grp_tres, "Most TRES all running jobs of the QOS may hold together."),
      integer<Q>("GrpJobs", &Q::grp_jobs, 0, kMaxJobs, "Most running jobs of the QOS at once.", true),
      aka(integer<Q>("GrpSubmitJobs", &Q::grp_submit_jobs, 0, kMaxJobs,
                     "Most jobs of the QOS pending or running at once.", true),
          {"GrpSubmit"}),
      aka(tres<Q>("MaxTRESPerJob", &Q::max_tres_per_job, "Most TRES one job may have."), {"MaxTRES", "MaxTRESPJ"}),
      aka(tres<Q>("MaxTRESPerNode", &Q::max_tres_per_node, "Most TRES one job may have on each node."), {"MaxTRESPN"}),
      aka(tres<Q>("MaxTRESPerUser", &Q::max_tres_per_user, "Most TRES one user's running jobs may hold."),
          {"MaxTRESPU"}),
      aka(integer<Q>("MaxJobsPerUser", &Q::max_jobs_per_user, 0, kMaxJobs, "Most running jobs per user.", true),
          {"MaxJobsPU"}),
      aka(integer<Q>("MaxSubmitJobsPerUser", &Q::max_submit_jobs_per_user, 0, kMaxJobs,
                     "Most pending or running jobs per user.", true),
          {"MaxSubmitJobsPU", "MaxSubmitJobs", "MaxSubmit"}),
      aka(time_limit<Q>("MaxWall", &Q::max_wall, "Longest time limit a job of the QOS may have."),
          {"MaxTime", "MaxWallDurationPerJob"}),
      bind_field<Q>("UsageFactor", "number from 0 to 1000000", "Multiplies the usage its jobs are charged in fair-share.",
              &Q::usage_factor, [](std::string_view s) { return parse_real_value(s, 0, 1000000); }, show_real),
      flags(),
      name_list<Q>("Preempt", &Q::preempt,
                   "QOS whose running jobs the jobs of this QOS may preempt (PreemptType=preempt/qos)."),
      preempt_mode<Q>(&Q::preempt_mode,
                      "How the jobs of this QOS are preempted under preempt/qos (unset, or CLUSTER: the cluster's "
                      "PreemptMode): CANCEL, REQUEUE or OFF (never).",
                      true),
      grace_time<Q>(&Q::grace_time,
                    "Under preempt/qos, a preempted job of this QOS gets SIGTERM at once and is requeued or "
                    "cancelled this long after."),
      time_limit_opt<Q>("PreemptExemptTime", &Q::preempt_exempt_time,
                        "A job of this QOS that has run less than this is not preempted (unset: the cluster's)."),
      text<Q>("Description", &Q::description, "Free text.", "text (quote it when it has spaces)")
  );
}

}  // namespace

const KeyTable<QosConfig>& qos_keys() {
  // Never destroyed: a command would otherwise spend its exit taking it apart.
  static const KeyTable<QosConfig>& table =
      *new KeyTable<QosConfig>("qos.conf", make_qos_keys(), passive_keys(kPassiveQosKeys));
  return table;
}

}  // namespace drover::config
