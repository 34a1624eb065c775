// The controller's state and every operation on it. Owned by one thread
// (the controller's loop): no locks. Operations never do I/O; each records
// what must happen in an Effects value: the store batch that makes the
// change durable, and the commands for agents that may be sent only once
// that batch is durable. The controller (controller.hpp) executes effects.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/job_errors.hpp"  // Slurm's errors for job operations, sent back per target
#include "common/result.hpp"
#include "ctld/ctld_scripts.hpp"
#include "ctld/mail.hpp"
#include "config/exit_codes.hpp"
#include "config/model.hpp"
#include "ctld/assoc.hpp"
#include "ctld/core_bridge.hpp"
#include "ctld/job_model.hpp"
#include "ctld/steps.hpp"
#include "drover/v1/accounting.pb.h"
#include "drover/v1/agent.pb.h"
#include "drover/v1/cluster.pb.h"
#include "drover/v1/jobs.pb.h"
#include "drover/v1/steps.pb.h"
#include "store/mutation.hpp"

namespace drover::ctld {

// Settings the controller derives from slurm.conf (and its command line).
struct Settings {
  std::string conf_path;
  std::string cluster_name;
  // SLURM_WORKING_CLUSTER of jobs and steps: cluster, controller address, port,
  // protocol 9728 (22.05) and the SelectType's plugin id, as Slurm 22.05 sets it.
  std::string working_cluster;
  std::string host;                 // SlurmctldHost (first)
  std::string shown_host;           // its name in ping and show config: this host's for "localhost", as Slurm's
  std::string state_dir;            // StateSaveLocation
  std::string log_file;             // SlurmctldLogFile ("" = stderr)
  std::string pid_file;             // SlurmctldPidFile ("" = none)
  bool private_jobs = false;        // PrivateData=jobs: a plain user sees only their own jobs
  // PrivateData's other words, for plain users (docs/cluster.md "PrivateData"):
  bool private_nodes = false;       // nodes: no sinfo, no scontrol show node
  bool private_partitions = false;  // partitions: no sinfo, no scontrol show partition
  bool private_reservations = false;  // reservations: only those they may use
  bool private_usage = false;       // usage: their own in sshare and sreport
  bool private_users = false;       // users: their own user record and associations in sacctmgr
  bool private_accounts = false;    // accounts: no sacctmgr show account
  bool private_events = false;      // events: no sacctmgr show event
  std::string socket_path;          // <StateSaveLocation>/ctld.sock
  std::string tcp_address;          // host:SlurmctldPort ("" = no TCP)
  std::string key_path;             // cluster key (AuthInfo key=PATH, default /etc/drover/drover.key)
  uint32_t slurm_user_uid = 0;
  std::set<uint32_t> operator_uids; // besides root, SlurmUser and the controller's own uid
  int64_t slurmd_timeout_s = 300;   // SlurmdTimeout
  int64_t heartbeat_s = 5;          // agents report this often
  int64_t min_job_age_s = 300;      // MinJobAge: finished jobs stay in memory this long
  int64_t kill_wait_s = 30;
  int64_t inactive_limit_s = 0;     // InactiveLimit: 0, an allocation's silent salloc or srun ends nothing
  int64_t max_array_size = 1001;
  int64_t max_script_size = 4194304;  // SchedulerParameters=max_script_size
  int64_t first_job_id = 1;  // slurm.conf FirstJobId
  int64_t max_job_count = 10000;
  int64_t bf_interval_s = 30;       // full scheduling pass
  int log_level = 3;                // SlurmctldDebug (config::kLogInfo); scontrol setdebug changes the log's
  uint64_t debug_flags = 0;         // DebugFlags (config::DebugFlags); scontrol setdebugflags too
  bool return_to_service = false;   // ReturnToService >= 1
  bool job_requeue = true;          // JobRequeue (default requeue on node failure)
  bool job_file_append = false;     // JobFileAppend=1: output files appended to without --open-mode
  bool kill_on_bad_exit = false;    // KillOnBadExit=1: srun's -K without -K0
  config::ExitCodes requeue_exit;   // RequeueExit: a batch script's exit codes that requeue its job
  config::ExitCodes requeue_exit_hold;  // RequeueExitHold: ... and hold it (SPECIAL_EXIT)
  // A requeued batch job may start again this long after its requeue: Slurm
  // waits out its launch credential's life, AuthInfo's cred_expire (120 s by
  // default), plus a second.
  int64_t requeue_wait_s = 121;
  bool kill_invalid_depend = false; // DependencyParameters=kill_invalid_depend
  bool calculate_running = false;   // PriorityFlags=CALCULATE_RUNNING: running jobs' priorities move on too
  // AccountingStorageEnforce names associations (or limits, qos, safe,
  // wckeys or all, which imply it): a job's user needs an association
  // (sacctmgr add user), and its account must be one of the user's.
  bool enforce_associations = false;
  // ... names qos (or all): a job's QOS must be one its association allows.
  bool enforce_qos = false;
  // ... names limits (or safe, all): the associations' limits (sacctmgr's
  // GrpTRES, GrpJobs, MaxJobs, ... on accounts and users) hold jobs back.
  bool enforce_limits = false;
  // Job e-mail (--mail-type): MailProg (Slurm's default /bin/mail) and
  // MailDomain (appended to a recipient without '@').
  std::string mail_prog = "/bin/mail";
  std::string mail_domain;
  // Prolog= and Epilog= (the agents run them): with either set, each
  // launch carries the Prolog's environment and a job that ends stays
  // COMPLETING on its nodes until each agent reports its Epilog's end.
  bool prolog = false;
  bool epilog = false;
  // SchedulerParameters=nohold_on_prolog_fail: a job whose Prolog failed
  // is requeued without the hold.
  bool nohold_on_prolog_fail = false;
  // PrologFlags=Alloc (or Contain, which implies it): the Prolog runs on
  // every node of a job as it starts, and its batch script waits for them.
  bool prolog_alloc = false;
  bool job_scripts() const { return prolog || epilog; }
  // PrologSlurmctld= and EpilogSlurmctld= (the controller runs them), "" unset.
  std::string prolog_slurmctld, epilog_slurmctld;
  // HealthCheckProgram with a HealthCheckNodeState other than ANY: the
  // agents are told their node's state (IDLE, MIXED, ALLOCATED).
  bool health_states = false;
};

// Settings from a loaded configuration; errors for values the controller cannot use.
Result<Settings> settings_from_config(const config::ClusterConfig& cfg, const std::string& conf_path);

// Who is calling, as the RPC layer established it.
struct Caller {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string user;   // "" when the uid has no passwd entry
  bool privileged = false;  // root, SlurmUser, an operator, or the controller's own uid
  std::string describe() const;
};

// The step id a Prolog order (PrologFlags=Alloc) goes out with, so that its
// answer comes back to prolog_result rather than to a launch's handlers.
inline constexpr int64_t kPrologOrderStep = -100;

// A command for one agent, sent once the effects' batch is durable.
struct AgentCommand {
  // kShutdown: scontrol shutdown; kEpilog: the job is over on the node (Epilog).
  enum Kind { kLaunch, kTerminate, kSignal, kSetTimeLimit, kShutdown, kEpilog } kind = kLaunch;
  std::string node;
  v1::LaunchRequest launch;   // kLaunch
  int64_t job_id = 0;
  std::string state;          // kTerminate: CANCELLED, TIMEOUT, NODE_FAIL
  std::string reason;
  int signal = 0;             // kSignal
  int64_t step_id = -1;       // kSignal, kTerminate: -1 every step of the job; kSetTimeLimit: -1 the batch step
  bool batch_only = false;
  bool every_step = false;    // kSignal: every step of the job on the node (suspend, resume)
  bool kill_now = false;      // kTerminate: SIGKILL at once (scancel N.S)
  bool requeue = false;       // kTerminate: the job is requeued (its notice says so)
  bool preempt = false;       // kTerminate: the job is preempted (its notice says so)
  int64_t time_limit_s = 0;   // kSetTimeLimit
  v1::EpilogOrder epilog;     // kEpilog
};

// The batch host's new time limit for the job, in seconds from its start (0: none).
AgentCommand time_limit_command(const v1::JobRecord& r, int64_t seconds);
// `sig` to the job's processes on `node`: step_id's, or (-1) every step's
// there (the batch_only and every_step fields narrow or widen it).
AgentCommand signal_command(int64_t job_id, const std::string& node, int sig, int64_t step_id = -1);
// How the ends of a job's steps are told on their stderr beyond "*** JOB N
// ON node CANCELLED AT ... ***": as a requeue or as a preemption.
enum class EndNotice { kRequeue, kPreempt };
// Marks the Terminate commands from `from` on to be told so.
void tell_ends_as(std::vector<AgentCommand>& commands, std::size_t from, EndNotice told);
// The end of the job's processes on `node` (step_id's, or every step's): SIGCONT
// and SIGTERM, SIGKILL after KillWait; `state` (CANCELLED, TIMEOUT, ...) and
// `reason` are what the node reports the ending with.
AgentCommand terminate_command(int64_t job_id, const std::string& node, const std::string& state,
                               std::string reason, int64_t step_id = -1);

// sstat: a running step and the nodes where it still runs.
struct UsageTarget {
  int64_t job_id = 0;  // the array element's own id for "N_M"
  int64_t step_id = 0;
  std::vector<std::string> nodes;
};

// sbcast: the nodes a job (or one of its steps) runs on, and whom to write as.
struct BcastTarget {
  std::vector<std::string> nodes;
  std::string user;
  uint32_t uid = 0;
  uint32_t gid = 0;
};

struct Effects {
  store::Batch batch;
  std::vector<AgentCommand> commands;
  std::vector<Mail> mails;  // sent (MailProg) once the batch is durable
  std::vector<CtldScript> scripts;  // PrologSlurmctld/EpilogSlurmctld runs, started once the batch is durable
  // Log lines (log.hpp) written once the batch is durable: a job is said to
  // have started when its start is stored. Make one only when log_enabled.
  std::vector<std::pair<int, std::string>> log;
  bool reschedule = false;
};

// How long what an agent tells the controller (a job's end, a launch's
// result) may wait for its commit: nobody is waiting on it but the agent, and
// the next submission, whose client does wait, carries it in the same commit
// and fsync.
inline constexpr std::chrono::milliseconds kAgentNewsMayWait{10};

// Node state the controller keeps beside the configuration.
struct NodeRt {
  // Durable (the store's nodes table): what an admin or a registration set.
  bool drain = false;
  bool fail = false;         // State=FAIL: taken out of use like a drain, shown as fail (failing while busy)
  bool down = false;
  bool invalid_reg = false;
  std::string reason;
  int64_t reason_time = 0;
  uint32_t reason_uid = 0;
  std::string reason_user;
  std::map<std::string, std::string> updates;  // scontrol update's Weight/AvailableFeatures/ActiveFeatures
  std::string comment;
  // This controller process's view.
  bool registered = false;   // reported since this controller started
  bool responding = false;
  int64_t last_heard = 0;
  int64_t agent_start = 0;
  int64_t boot_time = 0;
  int64_t last_busy = 0;
  std::string version, os, arch, hostname;
  double cpu_load = -1;
  int64_t free_mem_mb = -1;
};

// One scheduling pass's figures since the controller started (sdiag).
struct PassCounters {
  int64_t cycles = 0, last_us = 0, max_us = 0, total_us = 0;
  int64_t last_depth = 0, total_depth = 0;   // jobs the walk tested
  int64_t last_queue = 0, total_queue = 0;   // pending jobs given to the cycle
  int64_t last_when = 0;
  int64_t started = 0, backfilled = 0, last_planned = 0, last_reserved = 0;
};

struct Counters {
  int64_t submitted = 0, started = 0, completed = 0;
  int64_t completed_ok = 0, canceled = 0, failed = 0;  // how jobs ended (sdiag's split; canceled counts pending ones)
  int64_t cycles_quick = 0, cycles_full = 0;
  int64_t last_cycle_us = 0, max_cycle_us = 0, total_cycle_us = 0;
  PassCounters quick, full;                  // sdiag: main schedule / backfilling
};

// An advance reservation (scontrol create reservation): whole nodes over
// [start, end) for the jobs that name it (--reservation) and whose user or
// account it lists; the jobs outside it may use those nodes only around
// the window.
struct Reservation {
  std::string name;
  int64_t start = 0, end = 0;
  std::vector<core::NodeIndex> nodes;  // ascending
  std::vector<std::string> users, accounts;
  bool maint = false, overlap = false, ignore_jobs = false;
  bool spec_nodes = false;             // named by Nodes= (not picked for NodeCnt=)
  std::string partition;               // PartitionName= ("" = none)
  int64_t created = 0;                 // its place among those created (the order they are listed in)
  bool active(int64_t now) const { return start <= now && now < end; }
  bool admits(const std::string& user, const std::string& account) const;
};

// A hostlist's nodes, in the order given (duplicates kept); refused with
// Slurm's "Invalid node name specified" (": NAME" for a node slurm.conf
// does not have). scontrol update NodeName= and the reservations' Nodes=.
Result<std::vector<core::NodeIndex>> node_indices(const core::Cluster& c, std::string_view expr);

// The events table's key of an event: "NODE<TAB>START" (NODE empty for the
// cluster's TRES), "@NAME<TAB>ID" for a reservation's.
std::string event_key(const v1::ClusterEvent& e);

// A refusal of a reservation change, with the gRPC code that tells scontrol
// how to word it (ChangeReservationRequest).
struct ResvError {
  int code = 9;
  std::string message;
};

class ControllerState {
 public:
  ControllerState(config::ClusterConfig cfg, std::unique_ptr<CoreBridge> bridge, Settings settings);

  const config::ClusterConfig& config() const { return cfg_; }
  const CoreBridge& bridge() const { return *bridge_; }
  const Settings& settings() const { return settings_; }
  const std::map<core::JobId, Job>& jobs() const { return jobs_; }
  // Jobs pending or holding resources (not the finished ones kept for MinJobAge).
  const std::set<core::JobId>& active() const { return active_; }
  const std::vector<NodeRt>& nodes() const { return nodes_; }
  const Counters& counters() const { return counters_; }
  int64_t next_job_id() const { return next_job_id_; }
  int64_t start_time() const { return start_time_; }
  // When the running configuration was read: the start, or the last
  // reconfigure (scontrol show config's "Configuration data as of").
  int64_t config_time() const { return config_time_ ? config_time_ : start_time_; }

  // ---- recovery (persist.cpp) ----
  // Record by record, as the store streams them, so that a long history is
  // never held in memory at once: the nodes first, then every job record (a
  // finished job that MinJobAge has forgotten is read and dropped), then the
  // next job id (after the highest id seen), then the steps (steps.cpp).
  // The nodes' admin state, and their scontrol settings laid over slurm.conf.
  Status recover_nodes(const std::vector<std::pair<std::string, std::string>>& node_payloads);
  Status recover_job(int64_t id, const std::string& payload, int64_t now);
  void recover_next_job_id(std::optional<int64_t> stored);
  // The events still open (events.cpp): a node's down or drained stretch,
  // the cluster's TRES.
  Status recover_events(const std::vector<std::string>& open_payloads);
  // The cluster's TRES event: opened when the controller first starts on a
  // store, and again (the old one closed) when the configured TRES change.
  // Like Slurm without TrackSlurmctldDown, the time the controller is down
  // counts as the cluster's.
  void cluster_event(int64_t now, Effects& fx);
  // The same from records in hand.
  Status recover(const std::vector<std::pair<int64_t, std::string>>& job_payloads,
                 const std::vector<std::pair<std::string, std::string>>& node_payloads,
                 std::optional<int64_t> next_job_id, int64_t now);

  // ---- accounts, users and QOS (sacctmgr; accounting.cpp) ----
  // Installs what the store holds (or the first start's seed); the core gets its QOS.
  void set_accounting(AccountingDb db);
  const AccountingDb& accounting() const { return acct_; }
  // Root, SlurmUser and operators only. The scheduler uses the change from its next cycle.
  Result<AssocChange> modify_associations(const Caller& who, const v1::ModifyAssociationsRequest& req, int64_t now,
                                          Effects& fx);
  // Fair Tree factors from the associations' shares and their decayed
  // usage (recomputed by the full pass and after changes).
  const core::FairShareFactors& fairshare() const { return fairshare_; }
  // The usage ledger as the store holds it (persist.cpp: the usage table and
  // the usage_* meta values); recovery installs it before the first pass.
  void recover_usage(std::map<std::pair<std::string, std::string>, double> usage, int64_t last_decay,
                     int64_t charged_until);
  // Decayed usage per (account, user), as of the last charging pass.
  const std::map<std::pair<std::string, std::string>, double>& usage() const;
  v1::GetPrioritiesReply priorities(int64_t now) const;  // sprio
  // The job's priority factors now (its partition, fair share, age since eligible).
  // In `partition` (a name), else in the job's own.
  core::PriorityBreakdown priority_now(const Job& j, int64_t now, const std::string& partition = "") const;
  v1::GetSharesReply shares(int64_t now) const;          // sshare

  // ---- jobs (submit.cpp, control.cpp) ----
  // Refusals come back as an Error whose lines are Slurm's (each printed as
  // "<command>: error: <line>"); nothing is changed then.
  // `request_id` (the envelope's; may be empty): a submission that carries
  // the id of one already made by the same user, still in memory, is
  // answered with that job and makes none (the client sent it again after
  // losing the reply).
  Result<v1::SubmitReply> submit(const Caller& who, const v1::JobDescriptor& desc, bool test_only, int64_t now,
                                 Effects& fx, const std::string& request_id = "");
  std::vector<v1::JobResult> cancel(const Caller& who, const v1::CancelRequest& req, int64_t now, Effects& fx);
  std::vector<v1::JobResult> control(const Caller& who, const v1::ControlRequest& req, int64_t now, Effects& fx);
  // scontrol top: the named pending jobs (in the order named) take the
  // highest priorities among the pending jobs of their user, partition,
  // account and QOS, the others keep their order behind them, through the
  // jobs' nice values (the set of priorities is unchanged). Operators, or a
  // job's owner with SchedulerParameters=enable_user_top.
  std::vector<v1::JobResult> top(const Caller& who, const v1::ControlRequest& req, int64_t now, Effects& fx);
  std::vector<v1::JobResult> update(const Caller& who, const v1::UpdateJobRequest& req, int64_t now, Effects& fx);

  // ---- scheduling (schedule.cpp) ----
  void schedule(core::PassKind pass, int64_t now, Effects& fx);
  // The agent confirmed (or refused) a launch.
  void launch_result(int64_t job_id, int32_t restart_count, const v1::LaunchReply& reply, int64_t now, Effects& fx);
  // The Launch RPC itself failed (agent unreachable).
  void launch_unreachable(int64_t job_id, int32_t restart_count, const std::string& why, int64_t now, Effects& fx);
  // PrologFlags=Alloc: a node's answer to its Prolog order (reply), or the
  // failure to deliver it (error). The last success launches the batch script.
  void prolog_result(int64_t job_id, int32_t restart_count, const std::string& node,
                     const std::optional<v1::LaunchReply>& reply, const std::string& error, int64_t now, Effects& fx);

  // ---- scontrol reconfigure (reconfigure.cpp) ----
  // Applies a newly read slurm.conf: partitions (added, removed, changed),
  // node Features and Weight, scheduling and priority parameters, and the
  // settings derived from slurm.conf; the next pass plans with them. Refuses
  // the whole change, naming each difference, when it touches what the
  // agents or the controller's sockets started with (the node list, a node's
  // address, CPUs, memory or GRES, ClusterName, SlurmctldHost/Port,
  // StateSaveLocation, the key, SlurmUser, and the keys the agents read:
  // KillWait, SlurmdSpoolDir, TaskPlugin, ProctrackType, DisableRootJobs,
  // SlurmdParameters) or removes a partition a pending or running job is in.
  // Returns the changes worth logging.
  Result<std::vector<std::string>> reconfigure(config::ClusterConfig cfg, Settings settings, int64_t now, Effects& fx);
  // scontrol setdebug/setdebugflags: the log detail scontrol show config
  // shows (the log itself is log.hpp's). Not stored: a restart or a
  // reconfigure goes back to slurm.conf's, as Slurm's.
  void set_log_settings(int level, uint64_t flags) {
    settings_.log_level = level;
    settings_.debug_flags = flags;
  }

  // ---- scontrol update PartitionName= (partition_update.cpp) ----
  // Root, SlurmUser and operators. Applies Key=Value as on the partition's
  // slurm.conf line (State, MaxTime, Nodes, Default, PriorityTier, ...);
  // durable (kPartitionUpdatesMeta) and laid over slurm.conf at every start
  // and reconfigure. Refusals change nothing.
  // The request's action may instead create a partition or delete one (no
  // pending or running job in it), with the same durability.
  Status update_partition(const Caller& who, const v1::UpdatePartitionRequest& req, int64_t now, Effects& fx);
  // Recovery: the stored updates, laid over the configuration read at start;
  // those that no longer apply to slurm.conf are dropped, each with a note.
  Result<std::vector<std::string>> restore_partition_updates(const std::string& text);
  std::string partition_updates_text() const;

  // ---- advance reservations (reservation.cpp) ----
  // scontrol create|update|delete ReservationName= (root, SlurmUser and
  // operators); durable (kReservationsMeta). Returns the reservation's name.
  Result<std::string, ResvError> change_reservation(const Caller& who, const v1::ChangeReservationRequest& req,
                                                    int64_t now, Effects& fx);
  std::vector<v1::ReservationInfo> reservation_infos(int64_t now) const;
  const std::map<std::string, Reservation>& reservations() const { return reservations_; }
  // Recovery: the stored reservations (kReservationsMeta) and the counter
  // that names unnamed ones; a node slurm.conf no longer has is left out,
  // with a note.
  std::vector<std::string> restore_reservations(const std::string& text, int64_t seq);
  std::string reservations_text() const;
  // sbatch --reservation=NAME: Slurm's refusal, or nothing.
  Status check_job_reservation(const v1::JobRecord& rec) const;

  // ---- nodes (nodes.cpp) ----
  Result<v1::NodeReportReply> node_report(const v1::NodeReport& report, bool registering, int64_t now, Effects& fx);
  // scontrol update NodeName=: the nodes changed, and those RESUME passed
  // over because they were neither drained nor down (Slurm's "Invalid node
  // state specified" for them; a list of only such nodes is refused).
  struct NodeUpdate {
    std::vector<std::string> updated, not_resumable;
  };
  Result<NodeUpdate> update_node(const Caller& who, const v1::UpdateNodeRequest& req, int64_t now, Effects& fx);
  // Nodes not heard from within SlurmdTimeout go DOWN; finished jobs older
  // than MinJobAge leave memory (they stay in the store).
  void housekeeping(int64_t now, Effects& fx);

  // ---- job steps (steps.cpp, step_launch.cpp) ----
  Result<v1::CreateStepReply> create_step(const Caller& who, const v1::CreateStepRequest& req, int64_t now,
                                          Effects& fx);
  Result<v1::GetStepReply> get_step(const Caller& who, const v1::GetStepRequest& req) const;
  v1::GetStepsReply get_steps(const v1::GetStepsRequest& req, int64_t now) const;
  Result<std::vector<UsageTarget>> step_usage_targets(const Caller& who, const v1::GetStepUsageRequest& req) const;
  Status signal_step(const Caller& who, const v1::SignalStepRequest& req, int64_t now, Effects& fx);
  // sbcast: where a block of the caller's file goes, or Slurm's words for why not.
  Result<BcastTarget> bcast_target(const Caller& who, int64_t job_id, std::optional<int64_t> step_id) const;
  // salloc / srun outside an allocation: the allocation's end.
  Status complete_job(const Caller& who, const v1::CompleteJobRequest& req, int64_t now, Effects& fx);
  // The salloc or srun that holds job_id's allocation asked about it
  // (GetJobsRequest.allocator, GetStepRequest.allocator): noted, in memory
  // only, for inactive_allocations. Ignored unless `who` may act on the job
  // and it is an allocation still pending or running.
  void allocator_heard(const Caller& who, int64_t job_id, int64_t now);
  void step_launch_result(int64_t job_id, int64_t step_id, const std::string& node,
                          const std::optional<v1::LaunchReply>& reply,
                          const std::string& error, int64_t now, Effects& fx);
  // One stored step (recovery, after the jobs): kept when its job is in memory.
  Status recover_step(const std::string& key, const std::string& payload);
  const std::map<core::JobId, JobSteps>& steps() const { return steps_; }

  // ---- displays (display.cpp) ----
  // `detail`: per-node detail; `with_script`: the script and environment
  // (for the job's owner and the privileged only: see may_act_on).
  v1::JobRecord job_for_display(const Job& j, bool detail, bool with_script, int64_t now) const;
  // The job's owner, root, SlurmUser or an operator.
  bool may_act_on(const Caller& who, const Job& j) const { return who.privileged || who.uid == j.rec.uid(); }
  // Whether `who` may see the job in squeue, scontrol show job/step and
  // sprio: anyone, unless PrivateData=jobs (then its owner and the privileged).
  bool may_see(const Caller& who, const Job& j) const { return !settings_.private_jobs || may_act_on(who, j); }
  bool may_see(const Caller& who, int64_t job_id) const {
    auto it = jobs_.find(job_id);
    return it != jobs_.end() && may_see(who, it->second);
  }
  // Slurm's reason text for a job whose partition has too few nodes up.
  static constexpr const char* kNodesRequiredUnavailable =
      "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions";
  std::vector<v1::NodeInfo> node_infos(int64_t now) const;
  // A registered node that has missed its heartbeats for SlurmdTimeout/3:
  // shown not responding ("*") and given no new job until it is heard again.
  bool silent(const NodeRt& n, int64_t now) const;
  std::vector<v1::PartitionInfo> partitions() const;
  // scontrol show config's rows with Slurm's spelling of their values (display.cpp).
  void slurm_presentation(std::vector<std::pair<std::string, std::string>>& rows) const;
  std::vector<v1::ConfigEntry> config_entries() const;
  std::vector<v1::License> licenses() const;  // configured counts and what running jobs use
  v1::StatusReply status(int64_t now) const;
  // sdiag's figures (display.cpp).
  v1::DiagReply diag(int64_t now) const;
  // sdiag -r: the job and scheduling counters start again from zero now.
  void reset_statistics(int64_t now) {
    counters_ = Counters{};
    stats_since_ = now;
  }

 private:
  Result<v1::CreateStepReply> create_step_now(const Caller& who, const v1::CreateStepRequest& req, int64_t now,
                                              Effects& fx);
  void note_waiting_step(const Caller& who, const v1::CreateStepRequest& req, bool waiting, int64_t now);
  friend class StateTestPeer;
  Job* find_job(int64_t id);
  // Jobs a target names ("123" plain, "123" array: every element, "123_4").
  std::vector<Job*> resolve_target(const v1::JobTarget& t);
  // The tasks `t` names (J_[5-10]) that no element of its array is; none when it names no
  // tasks or no array. Said per task ("J_6-9: Invalid job id specified") by Slurm 22.05's
  // scontrol update, hold, release and requeue (anchor cluster).
  std::vector<int64_t> missing_tasks(const v1::JobTarget& t, const std::vector<Job*>& found) const;
  // Every durable change of a job goes through here (it also keeps active_).
  void put_job(const Job& j, Effects& fx, bool insert = false);
  // Also opens or closes the node's event (events.cpp) when its DOWN or
  // DRAIN state or reason changed.
  void put_node(core::NodeIndex i, int64_t now, Effects& fx);
  void node_event(core::NodeIndex i, int64_t now, Effects& fx);
  void put_event(const v1::ClusterEvent& e, Effects& fx) const;
  std::map<core::NodeIndex, v1::ClusterEvent> open_node_events_;
  std::optional<v1::ClusterEvent> open_cluster_event_;
  // Open events of nodes slurm.conf no longer has: closed at the first housekeeping.
  std::vector<v1::ClusterEvent> orphan_events_;
  // `reason`: Slurm's reason for the end when it is not the state's usual
  // one (JobLaunchFailure).
  void finish_job(Job& j, v1::JobState st, int exit_code, int exit_signal, const std::string& why, int64_t now,
                  Effects& fx, const char* reason = nullptr);
  void end_running(Job& j, v1::JobState st, const std::string& reason, uint32_t by_uid, int64_t now, Effects& fx);
  // Its agent could not start the batch script.
  void launch_failed(Job& j, const std::string& why, int64_t now, Effects& fx);
  void requeue_job(Job& j, int64_t now, Effects& fx);
  // A started job back to the queue (scontrol requeue): its processes are
  // ended first (end_running); it is PENDING at once, and COMPLETING until
  // its batch host reports the script's end.
  void requeue_started(Job& j, const std::string& why, uint32_t by_uid, int64_t now, Effects& fx,
                       EndNotice told = EndNotice::kRequeue);
  // Preemption after a pass (preempt.cpp): pending jobs the pass left
  // waiting on resources end the running jobs they may preempt and need gone.
  // The jobs a pass left waiting on resources that may preempt some job (a few).
  std::vector<core::JobId> preemptors(const core::CycleResult& result, int64_t now);
  int64_t preempt_generation() const;  // moves when a job starts or ends
  // `in`: the running jobs after the pass's starts.
  void preempt_for(const std::vector<core::JobId>& preemptors, const core::CycleInput& in, Effects& fx);
  std::pair<int32_t, uint32_t> preempt_rights(const Job& j) const;
  void preempt_job(Job& victim, core::PreemptMode mode, Seconds grace, const Job& by, int64_t now, Effects& fx);
  void end_preempted(Job& victim, bool requeue, core::JobId by, int64_t now, Effects& fx);
  // Jobs whose GraceTime after their preemption's SIGTERM is over are ended.
  void preempt_after_grace(int64_t now, Effects& fx);
  // Jobs it preempted still hold their resources (their processes ending).
  bool waits_for_preempted(core::JobId id);
  // scontrol suspend/resume of a started job (see job_end.cpp).
  void suspend_job(Job& j, int64_t now, Effects& fx);
  void resume_job(Job& j, int64_t now, Effects& fx);
  // `sig` to every process of every step of the job, on each node where it has one.
  void signal_job_everywhere(const Job& j, int sig, Effects& fx) const;
  // scancel --signal of a started job (control.cpp).
  void signal_running(const Job& j, const v1::CancelRequest& req, Effects& fx) const;
  void signal_steps(const Job& j, int sig, Effects& fx) const;
  // A suspended job's nodes: SIGSTOP, and no time limit on its batch host.
  void stop_on_nodes(const Job& j, Effects& fx) const;
  // A node that (re)registers gets the stop of each suspended job it runs
  // again: the reply to scontrol suspend goes out before its SIGSTOP reaches
  // the nodes, so a controller stopped in between (or an agent restarted)
  // would leave the job running. A second SIGSTOP and paused limit change nothing.
  void restop_suspended(core::NodeIndex ni, Effects& fx) const;
  // SetTimeLimit for the job's live srun steps with their own -t on each of
  // their nodes: none while suspended, else step_time_limit.
  void step_time_limits(const Job& j, bool none, Effects& fx) const;
  // OverTimeLimit for the job, in seconds: its partition's, else the
  // cluster's; -1 for UNLIMITED.
  int64_t over_time_s(const v1::JobRecord& r) const;
  // The time limit the agents enforce, in seconds from the start (0: none):
  // agent_time_limit() and OverTimeLimit. The scheduler, EndTime and the
  // warning signals keep to the job's own limit.
  int64_t enforced_time_limit(const v1::JobRecord& r) const {
    return with_over_time(agent_time_limit(r), over_time_s(r));
  }
  // The mail a job's event sends, if its --mail-type asks for it (mail.hpp):
  // an array element without ARRAY_TASKS mails its array's summary instead,
  // when it is the first to start or the last to end.
  void mail_event(const Job& j, unsigned event, int64_t now, Effects& fx) const;
  // TIME_LIMIT_50/80/90 and TIME_LIMIT, once each per run (housekeeping).
  void time_limit_mails(int64_t now, Effects& fx);
  // --signal=SIG@SECS without B: to the steps of each running job that has
  // come within SECS of its time limit, once a run.
  void warn_signals(int64_t now, Effects& fx);
  // The agent confirmed that the batch script started (its launch reply, or
  // the step in a node report).
  void confirm_launch(Job& j, Effects& fx);
  void start_job(const core::StartDecision& d, int64_t now, Effects& fx);
  // Keeps the reason a pass finds a pending job waiting for, when it is one
  // Slurm's accounting records (JobRecord.db_reason).
  static void note_db_reason(v1::JobRecord& r);
  // A partition's nodes that take jobs now, and the reason a job asking for
  // more waits with (schedule.cpp): counted once per pass, not per job.
  struct PartitionRoom {
    int32_t up = 0;
    std::string reason;
  };
  PartitionRoom partition_room(int32_t part, int64_t now) const;
  v1::LaunchRequest build_launch(const Job& j, const core::NodeTake& here) const;
  void plan_test_only(const core::JobSpec& spec, const std::string& reservation, int64_t now,
                      v1::SubmitReply& reply);
  // A cycle's decisions: starts, and each tested pending job's reason and plan.
  void apply_cycle(const core::CycleResult& result, core::PassKind pass, int64_t now, Effects& fx);
  bool kills_on_invalid_dependency(const Job& j) const;
  void cancel_invalid_dependency(Job& j, int64_t now, Effects& fx);
  void end_jobs_past_deadline(int64_t now, Effects& fx);
  void cancel_pending(Job& j, std::optional<uint32_t> by_uid, const std::string& why, int64_t now, Effects& fx);
  // Slurm's ReqNodeNotAvail reasons for jobs that the nodes keep waiting,
  // as on the anchor cluster: named (-w) nodes some of which cannot take
  // jobs now (drained, down, not responding: "ReqNodeNotAvail,
  // UnavailableNodes:cpu[3-4]") or are in a reservation not yet over ("May
  // be reserved for other job"); a MAINT reservation on the job's partition
  // before its planned start ("Reserved for maintenance").
  void node_reasons(const core::CycleResult& result, int64_t now);
  core::SubmitContext submit_context(const Caller& who) const;
  // A job that names no QOS takes its association's DefaultQOS; with
  // enforce_qos the QOS must be in the association's list, or the refusal returned is
  // given by check_submit once the partition and account are found good (submit.cpp).
  std::optional<core::Refusal> association_qos(const Caller& who, v1::JobRecord& rec) const;
  struct CycleInputs;
  CycleInputs cycle_inputs(int64_t now) const;
  mutable uint64_t run_stamps_ = 0;  // the last RunningJob::stamp given (cycle_inputs)
  // The agent's GPU health check: drains the node with its reason ("gpu
  // health: ...") unless an admin drained it already; "" lifts such a drain.
  void apply_gpu_health(core::NodeIndex ni, const std::string& problem, int64_t now, Effects& fx);
  void reconcile_node(core::NodeIndex ni, const std::set<int64_t>& reported, bool new_session, int64_t now,
                      Effects& fx);
  void keep_batch_usage(const Job& j, const v1::StepReport& s, Effects& fx);
  void apply_step_report(core::NodeIndex ni, const v1::StepReport& s, int64_t now, Effects& fx,
                         v1::NodeReportReply& reply);
  void node_lost(core::NodeIndex ni, const std::string& why, int64_t now, Effects& fx);
  // IDLE, MIXED or ALLOCATED: the node's CPUs held by running jobs (HealthCheckNodeState).
  std::string cpu_state(core::NodeIndex ni) const;
  // ---- Prolog and Epilog (job_scripts.cpp) ----
  // Slurm's prolog_slurmd / epilog_slurmd environment for the job's share of
  // a node; for the controller's PrologSlurmctld / EpilogSlurmctld the same
  // (of the job's first node) without SLURMD_NODENAME, in its own context.
  enum class ScriptSite { kNode, kController };
  std::vector<std::string> script_env(const Job& j, const core::NodeTake& t, bool epilog,
                                      ScriptSite site = ScriptSite::kNode) const;
  // A job's processes are over and it leaves its nodes: with Prolog or
  // Epilog set it stays COMPLETING and holds them until each node reports
  // its Epilog's end (true); else nothing is left to do (false).
  bool begin_epilogs(Job& j, Effects& fx);
  // The Epilog order for the job's share `t` of a node (its environment included).
  v1::EpilogOrder epilog_order(const Job& j, const core::NodeTake& t) const;
  // `node`'s Epilog of the job is over (ended, or the node lost): the last
  // one frees what the job held.
  void epilog_over(Job& j, const std::string& node, Effects& fx);
  // What a node's report says of Epilogs; acknowledged in the reply.
  void epilogs_reported(core::NodeIndex ni, const v1::NodeReport& report, int64_t now, Effects& fx,
                        v1::NodeReportReply& reply);
  // Epilogs the node still owes (its registration's reply): each again.
  void epilogs_owed(core::NodeIndex ni, v1::NodeReportReply& reply) const;
  // The node is gone: its Epilogs are not waited for.
  void forget_epilogs_on(core::NodeIndex ni, Effects& fx);
  // The job has left every node: what it held is free.
  void release_nodes(Job& j, Effects& fx);
  // The Prolog failed on `node`: the node drains ("Prolog error") and the
  // job goes back to the queue held (Slurm's "launch failed requeued held").
  void prolog_failed(Job& j, const std::string& node, const std::string& failure, int64_t now, Effects& fx);
  // PrologFlags=Alloc: the Prolog order to every node of a job that starts.
  void order_prologs(Job& j, Effects& fx);
  // The batch script's Launch to its batch host.
  void launch_batch(Job& j, Effects& fx);
  // What a started job does once its PrologSlurmctld has ended (or at once
  // without one): the nodes' Prologs (PrologFlags=Alloc), or the batch launch.
  void configured(Job& j, Effects& fx);
  // After a restart: the PrologSlurmctld of each job that was CONFIGURING
  // runs again (the one that ran died with the controller's process);
  // without one configured now, the job goes on at once.
  void resume_configuring(Effects& fx);
  // A job whose run ended before anything of it ran, back in the queue:
  // held (unless nohold_on_prolog_fail), "launch failed requeued held: WHY".
  void requeued_held(Job& j, const std::string& why, Effects& fx);
  // A started job of which nothing ran (its Prolog or PrologSlurmctld
  // failed): its run ends CANCELLED and it is back in the queue, requeued_held.
  void requeue_unlaunched(Job& j, const std::string& why, int64_t now, Effects& fx);
  // A PrologSlurmctld (prolog) or EpilogSlurmctld run of the job's present run.
  CtldScript ctld_script(const Job& j, bool prolog) const;
 public:
  // A PrologSlurmctld or EpilogSlurmctld has ended (the controller's script thread).
  void ctld_script_done(const CtldScript& s, const ScriptRun& run, int64_t now, Effects& fx);
 private:
  // A node drained by the controller itself (SlurmUser's name on the reason).
  void drain_node(core::NodeIndex ni, const std::string& reason, int64_t now, Effects& fx);
  // steps
  void put_step(const v1::StepInfo& s, Effects& fx) const;
  void start_batch_step(const Job& j, int64_t now, Effects& fx);
  void end_job_steps(const Job& j, int64_t now, Effects& fx);
  // Steps of a finished job that some node has not reported ended (the
  // script ended on its own while the agents' reports of a step that ended
  // before it were still on their way): settled by those reports, or closed
  // CANCELLED when none came within KillWait + SlurmdTimeout, or when the job
  // leaves memory.
  void settle_steps_after_end(int64_t now, Effects& fx);
  void close_open_steps(int64_t job_id, const std::string& why, int64_t now, Effects& fx);
  void apply_srun_step_report(core::NodeIndex ni, const v1::StepReport& s, int64_t now, Effects& fx,
                              v1::NodeReportReply& reply);
  void derive_exit(Job& j, const v1::StepInfo& s, Effects& fx);
  void record_requeued_run(Job& j, int64_t now, Effects& fx, int exit_code = 0);
  // RequeueExit/RequeueExitHold: the batch script ended on its own with
  // one of their codes; false (nothing done) when it did not.
  bool requeue_on_exit(Job& j, const v1::StepReport& s, int64_t end, Effects& fx);
  // A requeued job whose previous run's processes have ended: its nodes'
  // Epilogs run before it may start again, else its nodes are free now.
  void free_requeued_run(Job& j, Effects& fx);
  void put_run_record(const v1::JobRecord& run, const std::vector<v1::StepInfo>& steps, int64_t now,
                      Effects& fx) const;
  // A report of a step of the run a requeue ended (requeued_runs_): its
  // node's tasks' ends go into the run's record; false when it is not one.
  bool apply_requeued_step_report(const std::string& node, const v1::StepReport& r, int64_t now, Effects& fx);
  // An element changed by itself while it waits leaves the array's pending
  // record ("N_2" from now on); one left alone in that record becomes an
  // element of its own too ("N_1", no throttle), as Slurm 22.05 showed it
  // on the anchor cluster (a record submitted with one element stays "N_[5]").
  void split_array_element(Job& j, Effects& fx);
  // What every requeue does to the job itself: its run recorded for sacct -D,
  // PENDING again with one more restart, a batch job not before
  // Settings::requeue_wait_s from now, submitted anew.
  void return_to_queue(Job& j, int64_t now, Effects& fx, int exit_code = 0);
  void step_node_ended(Job& j, v1::StepInfo& s, v1::StepNode& n, int64_t now, Effects& fx);
  // A --no-kill job lost `node`: its running steps' parts there end NODE_FAIL.
  void fail_steps_on(Job& j, const std::string& node, const std::string& why, int64_t now, Effects& fx);
  void allocation_timeouts(int64_t now, Effects& fx);
  // Allocations whose salloc or srun is gone: one not heard from since it
  // was granted (kAllocatorGoneS on) ends FAILED 1:0, as Slurm's controller
  // ended one it could not tell of its grant; with InactiveLimit, one not
  // heard from for that long ends TIMEOUT, Reason=InactiveLimit.
  void inactive_allocations(int64_t now, Effects& fx);
  // job id -> when its allocation's command was last heard from; a job is
  // here once its command has asked (not salloc --no-shell's, which has
  // left), and after a controller restart once it asks again.
  std::unordered_map<core::JobId, int64_t> allocators_;
  v1::LaunchRequest build_step_launch(const Job& j, const core::NodeTake& take, const v1::StepInfo& s,
                                      const v1::CreateStepRequest& req, int node_index,
                                      const std::vector<int>& ranks_here) const;
  // Makes cfg (with its bridge and settings) the running configuration;
  // jobs' allocations and specs are resolved against it (reconfigure.cpp).
  void install_config(config::ClusterConfig cfg, std::unique_ptr<CoreBridge> bridge, Settings settings);
  // cfg with the nodes' scontrol settings (NodeRt::updates) applied; a
  // node's that no longer apply to it are left out, with a line in `notes`,
  // and kept (node_update.cpp). restore_node_updates installs them after
  // recovery.
  config::ClusterConfig with_node_updates(config::ClusterConfig cfg, std::vector<std::string>& notes) const;
  Status restore_node_updates();
  // cfg with partition_updates_ applied; the updates of partitions cfg no
  // longer has, or that no longer apply to it, are skipped: named in
  // `dropped`, with a line each in `notes` (partition_update.cpp).
  // Deletions and creations are applied first; a dropped deletion is named
  // "-NAME" in `dropped`. forget_partition_changes forgets what was dropped.
  config::ClusterConfig with_partition_updates(config::ClusterConfig cfg, std::vector<std::string>& notes,
                                               std::vector<std::string>& dropped) const;
  void forget_partition_changes(const std::vector<std::string>& dropped);
  bool created_by_scontrol(const std::string& partition) const;  // in partitions_created_
  using PartitionSettings = std::map<std::string, std::vector<std::pair<std::string, std::string>>>;
  static Result<std::vector<std::pair<std::string, std::string>>> settings_of(const v1::UpdatePartitionRequest& req);
  Status install_partitions(config::ClusterConfig cfg, PartitionSettings updates, const std::string& new_default,
                            Effects& fx);
  Status create_partition(const Caller& who, const v1::UpdatePartitionRequest& req, Effects& fx);
  Status delete_partition(const Caller& who, const std::string& name, Effects& fx);
  std::string dependency_display(const Job& j) const;
  std::vector<core::DepItemState> dependency_states(const Job& j) const;
  Status check_dependencies(const v1::Dependency& d) const;
  // Whether the job (or array task) a dependency names is known.
  bool dependency_target_known(const v1::DepItem& item) const;
  // A submission's dependencies on jobs the controller does not know (never
  // submitted, or purged after MinJobAge) are dropped, as Slurm 22.05 did on
  // the anchor cluster: the job does not wait for them.
  void drop_unknown_dependencies(v1::Dependency& d) const;
  void index_array(const Job& j);

  config::ClusterConfig cfg_;
  std::unique_ptr<CoreBridge> bridge_;
  Settings settings_;
  std::map<core::JobId, Job> jobs_;
  std::map<core::JobId, std::vector<core::JobId>> arrays_;  // array id -> element job ids
  // "uid/request id" of a submission -> the first job it made, for the jobs
  // in memory that carry one (JobRecord.submit_request_id).
  std::unordered_map<std::string, core::JobId> submit_requests_;
  void index_submit_request(const Job& j);
  void forget_submit_request(const Job& j);
  std::set<core::JobId> active_;  // pending or holding resources: what cycles and node views look at
  std::vector<NodeRt> nodes_;
  int64_t next_job_id_ = 1;
  // --test-only plans made (their specs' revisions, above any a real job reaches).
  static constexpr uint64_t kTestOnlyRevisions = uint64_t{1} << 62;
  uint64_t test_only_plans_ = 0;
  int64_t recovered_highest_id_ = 0;  // the highest job id recovery has read
  int64_t start_time_ = 0;
  int64_t stats_since_ = 0;  // the last sdiag -r (0: never, the counters run from start_time_)
  int64_t config_time_ = 0;  // the last reconfigure; 0: none since the start
  // scontrol update PartitionName= settings per partition, in the order given (a later one of a key replaces it).
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> partition_updates_;
  // Partitions scontrol created (their settings are in partition_updates_),
  // in the order created, and slurm.conf partitions it deleted.
  std::vector<std::string> partitions_created_;
  std::set<std::string> partitions_deleted_;
  std::map<std::string, Reservation> reservations_;
  int64_t reservation_seq_ = 0;      // reservations created so far (names unnamed ones)
  int64_t reservations_checked_ = 0; // housekeeping's last look at their windows
  // Ended reservations leave (durably); a start or an end reschedules.
  void reservation_windows(int64_t now, Effects& fx);
  Result<std::string, ResvError> create_reservation(const v1::ChangeReservationRequest& req, int64_t now,
                                                    Effects& fx);
  Result<std::string, ResvError> update_reservation(const v1::ChangeReservationRequest& req, int64_t now,
                                                    Effects& fx);
  Result<std::string, ResvError> delete_reservation(const std::string& name, int64_t now, Effects& fx);
  // Overlap with another reservation, busy nodes: what Slurm refuses.
  std::optional<ResvError> reservation_conflict(const Reservation& r, int64_t now) const;
  // An account or (under AccountingStorageEnforce) a user without an association: Slurm's refusal.
  std::optional<ResvError> unknown_reservation_member(const Reservation& r) const;
  // Gives r `count` nodes (NodeCnt=): keeps its first ones, adds free ones; "Requested nodes are busy".
  std::optional<ResvError> fill_reservation(Reservation& r, int64_t count, int64_t now) const;
  // Also writes each reservation's event (events.cpp): its window, nodes and
  // flags; one that is gone before its end ends `now`.
  void put_reservations(int64_t now, Effects& fx);
  v1::ClusterEvent reservation_event(const Reservation& r) const;
  void reservation_events(int64_t now, Effects& fx);
  std::map<std::string, v1::ClusterEvent> resv_events_;  // by event key: the reservations last written
  Counters counters_;
  std::map<core::JobId, JobSteps> steps_;
  // The steps sruns wait to create, by job and srun (host, pid): not state
  // the controller acknowledged, only what scontrol show step lists while
  // their sruns keep asking (every 200 ms; one not heard for 2 s has gone).
  struct WaitingStep {
    static constexpr int64_t kForgetAfterS = 2;  // an srun not heard for longer has gone
    v1::StepInfo info;
    int64_t seen = 0;
    bool gone(int64_t now) const { return now - seen > kForgetAfterS; }
  };
  std::map<core::JobId, std::map<std::pair<std::string, int64_t>, WaitingStep>> waiting_steps_;
  std::set<core::JobId> steps_after_end_;  // finished jobs with steps still open (settle_steps_after_end)
  // The run a requeue ended while some of its srun steps still ran: the
  // job's record as it ran and those steps, CANCELLED by the requeue, whose
  // nodes' reports of how their tasks ended are still to come (srun waits
  // for them to say how its tasks ended; sacct -D shows their exit codes).
  // Kept for KillWait + SlurmdTimeout, as long as a finished job's steps wait.
  struct RequeuedRun {
    v1::JobRecord run;
    std::vector<v1::StepInfo> steps;
    int64_t ended = 0;
  };
  std::map<core::JobId, RequeuedRun> requeued_runs_;
  bool earlier_run_ending(core::JobId id) const;
  bool just_requeued(const std::string& node, const v1::StepRef& step, int64_t now) const;
  // A job that preempted others -> those jobs, while it waits for them to
  // be gone (not durable: after a restart it may preempt again).
  std::map<core::JobId, std::vector<core::JobId>> preempting_;
  // A job no preemption would let start: (preempt_generation(), when), to
  // try it again only once something changed.
  std::map<core::JobId, std::pair<int64_t, int64_t>> preempt_failed_;
  AccountingDb acct_;
  core::FairShareFactors fairshare_;
  // Decayed usage per (account, user): CPU-seconds times the QOS
  // UsageFactor, halved every PriorityDecayHalfLife; charged up to
  // `usage_charged_until_` and stored with the pass that charges it.
  std::optional<core::UsageLedger> ledger_;
  int64_t usage_charged_until_ = 0;
  bool fairshare_dirty_ = true;
  void refresh_fairshare(int64_t now, Effects& fx);
  core::UsageLedger& ledger();

 public:
  // For JobHistory (schedule.cpp).
  const std::map<core::JobId, std::vector<core::JobId>>& arrays() const { return arrays_; }
};

}  // namespace drover::ctld
