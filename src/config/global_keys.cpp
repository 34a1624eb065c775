// slurm.conf global keys, declared as data (see key_table.hpp).
#include "common/strings.hpp"
#include "config/key_values.hpp"
#include "config/tables.hpp"

namespace drover::config {
namespace {

using C = ClusterConfig;
using namespace keys;

// Slurm keys (from `man slurm.conf`, 22.05) that Drover reads without acting on:
// they configure daemons, plugins or logging that Drover replaces or has no
// counterpart for. Accepted so that a site's own slurm.conf loads cleanly.
const char* const kPassiveGlobals[] = {
      "AccountingStorageBackupHost", "AccountingStorageExternalHost",
      "AccountingStorageHost", "AccountingStorageParameters", "AccountingStoragePass",
      "AccountingStoragePort", "AccountingStorageType", "AccountingStorageUser", "AccountingStoreFlags",
      "AcctGatherEnergyType", "AcctGatherFilesystemType", "AcctGatherInterconnectType", "AcctGatherNodeFreq",
      "AcctGatherProfileType", "AllowSpecResourcesUsage", "AuthAltParameters", "AuthAltTypes",
      "BackupAddr", "BatchStartTimeout", "BcastExclude", "BcastParameters", "BurstBufferType", "CacheGroups",
      "CliFilterPlugins", "CommunicationParameters", "CompleteWait", "ControlAddr", "CoreSpecPlugin",
      "CpuFreqDef", "CpuFreqGovernors", "CredType", "CryptoType",
      "EioTimeout", "EpilogMsgTime", "ExtSensorsFreq",
      "ExtSensorsType", "FairShareDampeningFactor", "FastSchedule", "FederationParameters",
      "GetEnvTimeout", "GpuFreqDef", "GroupUpdateForce", "GroupUpdateTime",
      "InteractiveStepOptions",
      "JobAcctGatherParams", "JobCompHost", "JobCompLoc",
      "JobCompParams", "JobCompPass", "JobCompPort", "JobCompType", "JobCompUser", "JobContainerType",
      "JobSubmitPlugins", "LaunchParameters", "LaunchType",
      "LogTimeFormat", "MaxDBDMsgs", "MaxJobId", "MaxNodeCount",
      "MCSParameters", "MCSPlugin", "MpiDefault",
      "MpiParams", "NodeFeaturesPlugins", "PluginDir", "PlugStackConfig", "PowerParameters",
      "PowerPlugin", "PrEpParameters", "PrEpPlugins",
      "PriorityCalcPeriod", "PriorityParameters", "PrioritySiteFactorParameters",
      "PrioritySiteFactorPlugin", "PriorityUsageResetPeriod", "PriorityWeightAssoc",
      "PropagatePrioProcess", "RebootProgram",
      "ReconfigFlags", "ResumeFailProgram", "ResumeProgram", "ResumeRate",
      "ResumeTimeout", "ResvEpilog", "ResvOverRun", "ResvProlog", "RoutePlugin",
      "SchedulerTimeSlice", "ScronParameters", "SlurmctldAddr", "SlurmctldPlugstack", "SlurmctldPrimaryOffProg",
      "SlurmctldPrimaryOnProg", "SlurmctldSyslogDebug", "SlurmctldTimeout", "SlurmdDebug",
      "SlurmdSyslogDebug", "SlurmdUser",
      "SlurmSchedLogFile", "SlurmSchedLogLevel", "SrunPortRange",
      "SuspendExcNodes", "SuspendExcParts", "SuspendProgram", "SuspendRate", "SuspendTime", "SuspendTimeout",
      "SwitchParameters", "SwitchType", "TaskPluginParam",
      "TCPTimeout", "TopologyParam", "TopologyPlugin", "TrackWCKey", "TreeWidth",
      "UnkillableStepProgram", "UnkillableStepTimeout", "UsePAM", "VSizeFactor", "X11Parameters",
};

// Slurm 22.05's PriorityFlags (man slurm.conf); FAIR_TREE is an older
// spelling of what is now the default.
const std::vector<std::string> kPriorityFlags = {
    "ACCRUE_ALWAYS",  "CALCULATE_RUNNING", "DEPTH_OBLIVIOUS", "FAIR_TREE",      "INCR_ONLY",
    "MAX_TRES",       "NO_FAIR_TREE",      "NO_NORMAL_ALL",   "NO_NORMAL_ASSOC", "NO_NORMAL_PART",
    "NO_NORMAL_QOS",  "NO_NORMAL_TRES",    "SMALL_RELATIVE_TO_TIME"};

// AuthInfo: kept as written; the commands read it too.
PassiveKey auth_info() {
  return PassiveKey{"AuthInfo",
                    {},
                    "its `key=PATH` is the cluster key that signs requests over TCP (controller, agents, commands); "
                    "its `socket=PATH` is where each host's local signer gives plain users tokens (agents, `drover "
                    "authd`; default /run/drover/auth.sock); its `cred_expire=N` (default 120) is how long a requeued batch job "
                    "waits, plus a second, before it may start again, as in Slurm"};
}

// SrunProlog/SrunEpilog: kept as written; srun reads them.
std::vector<PassiveKey> srun_scripts() {
  return {PassiveKey{"SrunProlog", {},
                     "srun: the program it runs on its own host before a step (srun --prolog overrides; docs/cluster.md "
                     "\"srun's prolog and epilog\")"},
          PassiveKey{"SrunEpilog", {}, "srun: the program it runs on its own host after a step (srun --epilog overrides)"}};
}

// Kept as written; sbatch and srun read them themselves:
// PropagateResourceLimits(Except) (common/rlimits.hpp) and WaitTime.
std::vector<PassiveKey> submit_command_keys() {
  return {PassiveKey{"PropagateResourceLimits", {},
                     "sbatch and srun: the submitting shell's soft limits the tasks get (ALL, the default, NONE, or "
                     "AS, CORE, CPU, DATA, FSIZE, MEMLOCK, NOFILE, NPROC, RSS, STACK), each capped at the node "
                     "agent's hard limit; --propagate wins"},
          PassiveKey{"PropagateResourceLimitsExcept", {},
                     "sbatch and srun: all of the submitting shell's soft limits but these (not with "
                     "PropagateResourceLimits); --propagate wins"},
          PassiveKey{"WaitTime", {},
                     "srun: seconds a step's other tasks may run on once its first task has ended, then they are "
                     "killed (0, the default: as long as they run); srun -W wins"}};
}

// Slurm keys the configuration model keeps as written for the daemons, which
// act on them (docs/cluster.md): not reported as having no effect.
std::vector<PassiveKey> passive_globals() {
  std::vector<PassiveKey> out = passive_keys(kPassiveGlobals);
  out.push_back(auth_info());
  for (auto& k : srun_scripts()) out.push_back(std::move(k));
  for (auto& k : submit_command_keys()) out.push_back(std::move(k));
  const std::pair<const char*, const char*> daemons[] = {
      {"AccountingStorageEnforce", "the controller: `associations` (or limits, qos, safe, wckeys, all) admits only "
                                   "jobs of users with an association (sacctmgr add user), on one of their accounts; "
                                   "`qos` (or all) only with a QOS their association allows; `limits` (or safe, "
                                   "all) enforces the associations' limits (sacctmgr's GrpTRES, GrpJobs, MaxJobs, "
                                   "MaxWall, ...; docs/accounting.md)"},
      {"DebugFlags", "the controller: Backfill logs each full scheduling pass's figures, Protocol each call's "
                     "answer, TraceJobs each change of a pending job's reason; the other subsystems are accepted "
                     "and add nothing (`scontrol setdebugflags` changes them until a restart or reconfigure)"},
      {"DisableRootJobs", "the agents run root's jobs only with `NO`"},
      {"SlurmctldDebug", "the controller's log: quiet, fatal, error (failures only), info (default: also each job "
                         "submitted, started and ended), verbose, debug (also each scheduling pass), debug2 and up "
                         "(also each call); `scontrol setdebug` changes it until a restart or reconfigure"},
      {"DependencyParameters", "the controller: kill_invalid_depend cancels a job once its dependency can never be "
                               "satisfied (a job's own --kill-on-invalid-dep=yes|no wins); the other parameters have no "
                               "effect"},
      {"JobAcctGatherFrequency", "the agents: seconds between samples of each task's memory, CPU time and I/O "
                                 "(`30`, `task=30`; default 30; 0: only as tasks end), which sacct and sstat "
                                 "report"},
      {"JobAcctGatherType", "the agents: jobacct_gather/none takes no samples (CPU time and each task's largest "
                            "process's peak memory are still recorded as tasks end); any other gathers"},
      {"FirstJobId", "the controller: the id of a new cluster's first job (default 1); each later job takes the "
                     "next; raised later, the next job takes it (ids are never given twice)"},
      {"InactiveLimit", "the controller: an allocation of salloc (not --no-shell) or of srun outside one ends "
                        "TIMEOUT (Reason=InactiveLimit) once its command has not been heard from for this many "
                        "seconds (0, the default: never; RootOnly partitions' jobs never); one whose command was gone "
                        "when it was granted ends FAILED either way"},
      {"JobRequeue", "the controller requeues (1, the default) or fails (0) the jobs of a node that stops responding"},
      {"JobFileAppend", "the agents: 1 appends a job's or step's output and error files when they exist (a "
                        "requeued job's too); 0, the default, truncates them; --open-mode wins"},
      {"KillOnBadExit", "the controller: 1 ends an srun step's other tasks once one of them exits non-zero or "
                        "is killed, as srun -K does (srun -K0 keeps them)"},
      {"MailDomain", "the controller: appended to a job mail's recipient that has no `@`"},
      {"RequeueExit", "the controller: a batch script that exits with one of these codes (`1-9,18`) puts its job back "
                      "in the queue, --no-requeue or not, its run recorded REQUEUED with that exit code (sacct -D)"},
      {"RequeueExitHold", "the controller: as RequeueExit, the job then held in SPECIAL_EXIT (squeue SE, "
                          "JobHeldUser) until released"},
      {"MailProg", "the controller: the program job mail (`--mail-type`) goes through, as `MailProg -s SUBJECT "
                   "USER` with an empty body (default /bin/mail)"},
      {"Epilog", "the agents: run as root on each node of a job once it is over there (a program or a glob "
                 "pattern), with Slurm's epilog_slurmd environment; the job stays COMPLETING and its nodes take no "
                 "new job until each has ended; one that fails drains its node (\"Epilog error\")"},
      {"HealthCheckInterval", "the agents: seconds between HealthCheckProgram runs (0, the default: only when the "
                              "agent starts)"},
      {"HealthCheckNodeState", "the agents: run HealthCheckProgram only while the node is IDLE, MIXED or ALLOC "
                               "(comma-separated; default ANY); CYCLE spreads the nodes over the interval"},
      {"HealthCheckProgram", "the agents: run as root with SLURMD_NODENAME when the agent starts (before it "
                             "registers) and every HealthCheckInterval seconds, killed after 60 s; it drains its "
                             "node itself (scontrol update), a failure is logged"},
      {"Prolog", "the agents: run as root on a node before a job's first step there (a program or a glob pattern), "
                 "with Slurm's prolog_slurmd environment; one that fails drains the node (\"Prolog error\") and "
                 "requeues the job held (SchedulerParameters=nohold_on_prolog_fail: not held)"},
      {"PrologFlags", "the controller: Alloc (or Contain, which implies it) runs the Prolog on every node of a job "
                      "as it starts, in parallel, and launches the batch script once each has ended (squeue's "
                      "reason meanwhile: Prolog); the other flags have no effect"},
      {"EpilogSlurmctld", "the controller: run on its host as its user when a job that ran ends, with the job's "
                          "variables (SLURM_SCRIPT_CONTEXT=epilog_slurmctld, SLURM_JOB_EXIT_CODE, ...); changes nothing"},
      {"PrologSlurmctld", "the controller: run on its host as its user as a job starts, with the job's variables "
                          "(SLURM_SCRIPT_CONTEXT=prolog_slurmctld); the job is CONFIGURING (CF) and its batch script "
                          "or first step waits until it ends; one that fails requeues the job held (a batch job that "
                          "may be requeued) or cancels it"},
      {"PrologEpilogTimeout", "the agents: seconds a Prolog or Epilog may run before it is killed and counts as "
                              "failed (default: as long as it runs)"},
      {"ProctrackType", "the agents: with a TaskPlugin without task/cgroup, anything but proctrack/cgroup makes no "
                        "cgroup at all"},
      {"ReturnToService", "the controller: 1 or more brings a node that was DOWN for not responding back when its "
                          "agent reports"},
      {"SlurmctldParameters", "the controller: `drover_operators=a:b` may act on every job and node"},
      {"SlurmdParameters", "the agents: `config_overrides` takes CPUs, memory and TmpDisk as slurm.conf declares them"},
      {"SlurmdTimeout", "the controller marks a node DOWN after this many silent seconds (300)"},
      {"SlurmctldLogFile", "the controller logs there instead of stderr (appended; `drover controller -L FILE` "
                           "overrides; SIGUSR2 reopens it for logrotate)"},
      {"PrivateData", "the controller, for plain users: `jobs` shows only their own jobs and steps in squeue, "
                      "scontrol show job/step, sprio and sacct (others' ids read as invalid, as Slurm's); `nodes` "
                      "and `partitions` refuse sinfo and scontrol show node/partition; `reservations` shows only "
                      "those naming them or their accounts; `usage` their own rows in sshare and jobs in sreport; "
                      "`users` their own user and associations in sacctmgr; `accounts` refuses sacctmgr show "
                      "account; `events` sacctmgr show event (Slurm's slurmdbd takes the accounting words from "
                      "slurmdbd.conf; Drover keeps its accounting itself); `cloud` hides nothing (no cloud nodes)"},
      {"SlurmctldPidFile", "the controller writes its pid there once it holds StateSaveLocation's lock"},
      {"SlurmdLogFile", "each agent logs there instead of stderr (`%n`: its node, `%h`: the host; `drover agent -L "
                        "FILE` overrides; SIGUSR2 reopens it)"},
      {"SlurmdPidFile", "each agent writes its pid there once it serves its node's address (`%n`, `%h` as above)"},
      {"TaskEpilog", "the agents: run as the job's user after each task ends (after srun's --task-epilog), "
                     "with the task's environment; its stderr and a failure line go to the task's stderr"},
      {"TmpFS", "the agents: the file system whose size is a node's TmpDisk (default /tmp); one smaller than "
                "TmpDisk= drains the node (\"Low TmpDisk\")"},
      {"TaskPlugin", "the agents: without task/cgroup, cores, memory and GPUs are not confined"},
      {"TaskProlog", "the agents: run as the job's user before each task starts (before srun's --task-prolog); "
                     "its `export NAME=value`, `unset NAME` and `print TEXT` lines set the task's environment and "
                     "write to its stdout; one that fails ends the task with its exit code"},
  };
  for (const auto& [name, what] : daemons) out.push_back(PassiveKey{name, {}, what});
  return out;
}

// "name" or "name(addr)", as SlurmctldHost takes it.
Status parse_ctld_host(std::string_view s) {
  if (s.empty()) return make_error("expected a host name, or name(address)");
  auto open = s.find('(');
  if (open == std::string_view::npos) {
    if (s.find(')') != std::string_view::npos) return make_error("expected a host name, or name(address)");
    return {};
  }
  if (open == 0 || s.back() != ')' || open + 2 > s.size() - 1 ||
      s.substr(open + 1).find('(') != std::string_view::npos) {
    return make_error("expected a host name, or name(address)");
  }
  return {};
}

KeyDef<C> slurmctld_host() {
  KeyDef<C> d;
  d.name = "SlurmctldHost";
  d.aliases = {"ControlMachine", "BackupController"};
  d.values = "host name, or name(address); repeat the key for backups";
  d.doc = "Controller host; the first is the primary, later ones are backups.";
  d.repeatable = true;
  d.parse = [](C& c, std::string_view s, ValueContext&) -> Status {
    if (auto st = parse_ctld_host(s); !st) return st;
    c.slurmctld_hosts.emplace_back(s);
    return {};
  };
  d.show = [](const C& c) { return join(c.slurmctld_hosts, ","); };
  return d;
}

KeyDef<C> cluster_name() {
  return text<C>("ClusterName", &C::cluster_name, "Name of the cluster, shown by the commands and used for %c in Include.");
}

KeyDef<C> state_save_location() {
  return text<C>("StateSaveLocation", &C::state_save_location, "Directory where the controller keeps its state.", "directory");
}

// SlurmctldPort may be a range ("6817-6820") for several controller ports; the first is used.
KeyDef<C> port_key(std::string name, int C::*field, std::string doc) {
  KeyDef<C> d;
  d.name = std::move(name);
  bool allow_range = d.name == "SlurmctldPort";
  d.values = allow_range ? "port 1..65535, or a range such as 6817-6820" : "port 1..65535";
  d.doc = std::move(doc);
  d.parse = [field, allow_range](C& c, std::string_view s, ValueContext&) -> Status {
    auto dash = s.find('-');
    std::string_view first = allow_range && dash != std::string_view::npos ? s.substr(0, dash) : s;
    auto lo = parse_int_value(first, 1, 65535, false);
    if (!lo) return make_error("expected a port number from 1 to 65535");
    if (first.size() != s.size()) {
      auto hi = parse_int_value(s.substr(dash + 1), 1, 65535, false);
      if (!hi || *hi < *lo) return make_error("expected a port number from 1 to 65535, or a range such as 6817-6820");
    }
    c.*field = static_cast<int>(*lo);
    return {};
  };
  d.show = [field](const C& c) { return std::to_string(c.*field); };
  return d;
}

KeyDef<C> slurmctld_port() { return port_key("SlurmctldPort", &C::slurmctld_port, "Port the controller listens on."); }

const std::vector<std::string> kSelectTypeParams = {
    "CR_CPU", "CR_CPU_Memory", "CR_Core", "CR_Core_Memory", "CR_Socket", "CR_Socket_Memory",
    "CR_Memory", "CR_LLN", "CR_Pack_Nodes", "CR_ONE_TASK_PER_CORE", "CR_CORE_DEFAULT_DIST_BLOCK",
    "OTHER_CONS_RES", "OTHER_CONS_TRES"};

KeyDef<C> select_type_parameters() {
  return flag_list<C>("SelectTypeParameters", &C::select_type_parameters, kSelectTypeParams,
                      "What is consumable on a node; Drover places cores and memory as CR_Core_Memory does.",
                      "options");
}

// PriorityWeightTRES=CPU=1000,Mem=2000,GRES/gpu=5000
KeyDef<C> priority_weight_tres() {
  KeyDef<C> d;
  d.name = "PriorityWeightTRES";
  d.values = "comma-separated TRES=weight, e.g. CPU=1000,GRES/gpu=5000";
  d.doc = "Weight of each TRES in the job-size factor of priority/multifactor.";
  d.parse = [](C& c, std::string_view s, ValueContext&) -> Status {
    std::map<std::string, double> out;
    for (const auto& item : split(s, ',')) {
      auto eq = item.find('=');
      std::string name = canonical_tres_name(item.substr(0, eq == std::string::npos ? item.size() : eq));
      auto w = eq == std::string::npos ? Result<double>(make_error("")) : parse_real_value(item.substr(eq + 1), 0, 4294967295.0);
      if (name.empty() || !w) {
        return make_error("expected comma-separated TRES=weight items such as CPU=1000,GRES/gpu=5000 (bad item \"" + item + "\")");
      }
      out[name] = *w;
    }
    c.priority_weight_tres = std::move(out);
    return {};
  };
  d.show = [](const C& c) {
    std::vector<std::string> items;
    for (const auto& [name, w] : c.priority_weight_tres) items.push_back(name + "=" + show_real(w));
    return join(items, ",");
  };
  return d;
}

KeyDef<C> tres_name_list(std::string name, std::vector<std::string> C::*field, std::string doc) {
  KeyDef<C> d = name_list<C>(std::move(name), field, std::move(doc));
  d.values = "comma-separated TRES names, e.g. gres/gpu,gres/gpu:h100,license/fsbw";
  d.parse = [field](C& c, std::string_view s, ValueContext&) -> Status {
    std::vector<std::string> out;
    for (const auto& item : split(s, ',')) {
      std::string canon = canonical_tres_name(item);
      if (canon.empty()) {
        return make_error("expected comma-separated TRES names such as gres/gpu,license/fsbw (bad item \"" + item + "\")");
      }
      out.push_back(canon);
    }
    c.*field = std::move(out);
    return {};
  };
  return d;
}

KeyDef<C> seconds(std::string name, Seconds C::*field, int64_t max, std::string doc) {
  KeyDef<C> d = integer<C>(std::move(name), field, 0, max, std::move(doc));
  d.values = "seconds, 0 to " + std::to_string(max);
  return d;
}

// Also read by sbatch/srun/salloc, which refuse a --gres it does not list.
KeyDef<C> gres_types() {
  return name_list<C>("GresTypes", &C::gres_types, "Generic resource names in use (gpu, mps, shard, ...).");
}

KeyDef<C> message_timeout() {
  return seconds("MessageTimeout", &C::message_timeout, 3600,
                 "Seconds a command keeps trying to reach the controller (once a second) before it gives up; a "
                 "submission sent again after a lost reply is recognised and not run twice.");
}

// Licenses=fsbw:20,matlab:3,lic — cluster-wide counts jobs take with -L
// (count 1 when omitted; `name*count` is read as `name:count`).
KeyDef<C> licenses() {
  KeyDef<C> d;
  d.name = "Licenses";
  d.values = "comma-separated name[:count] items, e.g. fsbw:20,matlab:3 (count 1 when omitted)";
  d.doc = "Cluster-wide licenses (or any countable token pool, such as file-system bandwidth) that jobs take with "
          "-L/--licenses and QOS limit as license/NAME; a job waits (Licenses) while too few are free.";
  d.parse = [](C& c, std::string_view s, ValueContext&) -> Status {
    std::map<std::string, int64_t> out;
    for (const auto& raw : split(s, ',')) {
      std::string_view item = trim(raw);
      if (item.empty()) continue;  // "a,,b", a trailing comma
      auto sep = item.find_first_of(":*");
      std::string name(trim(item.substr(0, sep)));
      if (name.empty()) return make_error("expected name[:count] items such as fsbw:20 (an item has no name)");
      if (name.find_first_of(" =@") != std::string::npos) {
        return make_error("license name \"" + name + "\" may not contain spaces, '=' or '@'");
      }
      int64_t count = 1;
      if (sep != std::string_view::npos) {
        auto n = parse_int_value(trim(item.substr(sep + 1)), 0, 2147483647, false);
        if (!n) {
          return make_error("license " + name + ": expected a count from 0 to 2147483647 after '" +
                            std::string(1, item[sep]) + "' (got \"" + std::string(item.substr(sep + 1)) + "\")");
        }
        count = *n;
      }
      if (out.count(name)) return make_error("license " + name + " is listed twice");
      out[name] = count;
    }
    c.licenses = std::move(out);
    return {};
  };
  d.show = [](const C& c) {
    std::vector<std::string> items;
    for (const auto& [name, count] : c.licenses) items.push_back(name + ":" + std::to_string(count));
    return join(items, ",");
  };
  return d;
}

const uint32_t kMaxWeight = 4294967295u;

std::vector<KeyDef<C>> make_global_keys() {
  return key_defs<C>(
      cluster_name(),
      slurmctld_host(),
      slurmctld_port(),
      port_key("SlurmdPort", &C::slurmd_port, "Port the node agents listen on (NodeName Port= overrides it per node)."),
      state_save_location(),
      text<C>("SlurmdSpoolDir", &C::slurmd_spool_dir, "Directory where node agents keep job files (%n: node name).", "directory"),
      text<C>("SlurmUser", &C::slurm_user, "User the controller runs as.", "user name"),
      text<C>("AuthType", &C::auth_type, "Authentication plugin; Drover authenticates its own way and records the value.", "plugin name"),
      choice<C>("SelectType", &C::select_type, {"select/cons_tres", "select/cons_res", "select/linear"},
                "Resource selection; Drover always places with cons_tres semantics (cores, memory, GPU devices)."),
      select_type_parameters(),
      choice<C>("SchedulerType", &C::scheduler_type, {"sched/backfill", "sched/builtin"},
                "sched/backfill: small jobs fill holes without delaying reserved ones; sched/builtin: strict FCFS by priority."),
      scheduler_parameters_key(),
      choice<C>("PreemptType", &C::preempt_type, {"preempt/none", "preempt/qos", "preempt/partition_prio"},
                "preempt/qos: a pending job may end running jobs of the QOS its own QOS lists (Preempt=); "
                "preempt/partition_prio: of partitions with a lower PriorityTier; preempt/none: never."),
      preempt_mode<C>(&C::preempt_mode,
                      "How preempted jobs end: CANCEL (PREEMPTED), REQUEUE (back to the queue; a job that may not "
                      "be requeued is cancelled), OFF. SUSPEND and GANG are not built: jobs they would preempt "
                      "keep running.",
                      false),
      time_limit<C>("PreemptExemptTime", &C::preempt_exempt_time,
                    "A job that has run less than this is not preempted."),
      choice<C>("PriorityType", &C::priority_type, {"priority/basic", "priority/multifactor"},
                "priority/basic: FIFO order; priority/multifactor: weighted age, fair-share, size, partition, QOS and TRES."),
      integer<C>("PriorityWeightAge", &C::priority_weight_age, 0, kMaxWeight, "Weight of the age factor."),
      integer<C>("PriorityWeightFairshare", &C::priority_weight_fairshare, 0, kMaxWeight, "Weight of the fair-share factor."),
      integer<C>("PriorityWeightJobSize", &C::priority_weight_job_size, 0, kMaxWeight, "Weight of the job-size factor."),
      integer<C>("PriorityWeightPartition", &C::priority_weight_partition, 0, kMaxWeight,
                 "Weight of the partition factor (PriorityJobFactor)."),
      integer<C>("PriorityWeightQOS", &C::priority_weight_qos, 0, kMaxWeight, "Weight of the QOS factor."),
      priority_weight_tres(),
      time_limit<C>("PriorityDecayHalfLife", &C::priority_decay_half_life, "Half-life of past usage in fair-share."),
      time_limit<C>("PriorityMaxAge", &C::priority_max_age, "Queue time at which the age factor reaches 1."),
      yes_no<C>("PriorityFavorSmall", &C::priority_favor_small, "YES: the job-size factor favours small jobs."),
      flag_list<C>("PriorityFlags", &C::priority_flags, kPriorityFlags,
                   "NO_NORMAL_PART, NO_NORMAL_QOS and NO_NORMAL_TRES (NO_NORMAL_ALL: all three) weigh the "
                   "partition's PriorityJobFactor, the QOS's Priority and each TRES count as they are instead of "
                   "as fractions of the largest (of the partition's total), as Slurm 22.05's sprio showed them; "
                   "SMALL_RELATIVE_TO_TIME divides the job-size factor by the time limit in minutes; "
                   "ACCRUE_ALWAYS ages jobs from submission, also while they wait on a dependency or --begin; "
                   "MAX_TRES bills the largest of a job's weighted cpu, mem, node and gres (TRESBillingWeights); "
                   "INCR_ONLY keeps a pending job's priority from going down (its fair share may fall); "
                   "CALCULATE_RUNNING recomputes running jobs' priorities at each full pass (else kept from their "
                   "start); "
                   "the other flags are accepted with no effect (`config check`: priority-flag-not-built)."),
      gres_types(),
      tres_name_list("AccountingStorageTRES", &C::accounting_storage_tres,
                     "TRES tracked beyond the defaults (cpu, mem, energy, node, billing, fs/disk, vmem, pages)."),
      choice<C>("EnforcePartLimits", &C::enforce_part_limits, {"NO", "ANY", "ALL", "YES"},
                "Reject at submission a job that breaks partition limits (ANY/ALL/YES) instead of leaving it pending."),
      integer<C>("MaxJobCount", &C::max_job_count, 1, 100000000, "Most jobs the controller keeps at once."),
      integer<C>("MaxArraySize", &C::max_array_size, 0, 4000001, "Largest array index plus one."),
      integer<C>("MaxStepCount", &C::max_step_count, 1, 2147483647,
                 "Most steps one job may create; srun beyond it fails (Step limit reached for this job)."),
      integer<C>("MaxTasksPerNode", &C::max_tasks_per_node, 1, 65533,
                 "Most tasks of one step on a node; a larger step is refused (Task count specification invalid)."),
      integer<C>("OverTimeLimit", &C::over_time_limit, 0, 65533,
                 "Minutes a job may run past its time limit before it ends TIMEOUT; the scheduler still plans on "
                 "the limit.",
                 true),
      seconds("MinJobAge", &C::min_job_age, 100000000, "Seconds a finished job stays visible to squeue."),
      seconds("KillWait", &C::kill_wait, 65533, "Seconds between SIGTERM and SIGKILL when a job is stopped."),
      message_timeout(),
      licenses(),
      optional_integer<C>("DefCpuPerGPU", &C::def_cpu_per_gpu, 1, 1 << 20,
                          "CPUs per allocated GPU for jobs that ask for neither --cpus-per-task nor --cpus-per-gpu."),
      memory_mb<C>("DefMemPerCPU", &C::def_mem_per_cpu_mb, "Memory per allocated CPU for jobs that ask for none."),
      memory_mb<C>("DefMemPerGPU", &C::def_mem_per_gpu_mb, "Memory per allocated GPU for jobs that ask for none."),
      memory_mb<C>("DefMemPerNode", &C::def_mem_per_node_mb, "Memory per node for jobs that ask for none."),
      memory_mb<C>("MaxMemPerCPU", &C::max_mem_per_cpu_mb, "Most memory a job may have per allocated CPU."),
      memory_mb<C>("MaxMemPerNode", &C::max_mem_per_node_mb, "Most memory a job may have per node.")
  );
}

}  // namespace

const KeyTable<ClusterConfig>& global_keys() {
  // Never destroyed: a command would otherwise spend its exit taking it apart.
  static const KeyTable<ClusterConfig>& table =
      *new KeyTable<ClusterConfig>("slurm.conf", make_global_keys(), passive_globals());
  return table;
}

const KeyTable<ClusterConfig>& command_keys() {
  // The same definitions as global_keys(), without building that table (the
  // larger part of a command's start-up when every command did).
  static const KeyTable<ClusterConfig>& table = *new KeyTable<ClusterConfig>(
      "slurm.conf (commands)",
      key_defs<C>(cluster_name(), slurmctld_host(), slurmctld_port(), state_save_location(), message_timeout(),
                  gres_types()),
      [] {
        std::vector<PassiveKey> keys = {auth_info()};
        for (auto& k : srun_scripts()) keys.push_back(std::move(k));
        for (auto& k : submit_command_keys()) keys.push_back(std::move(k));
        return keys;
      }());
  return table;
}

const std::vector<PassiveKey>& passive_line_kinds() {
  static const std::vector<PassiveKey> kinds = {
      {"DownNodes", "node states come from the agents and scontrol", {}},
      {"FrontendName", "front-end nodes are not supported", {}},
  };
  return kinds;
}

}  // namespace drover::config
