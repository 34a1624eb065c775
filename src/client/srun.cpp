// srun and salloc: inside an allocation (SLURM_JOB_ID) srun runs a step
// there; outside it first obtains an allocation (as salloc does), runs the
// step and gives the allocation back. salloc runs a command (default: the
// user's shell) with the allocation's environment and releases it on exit.
#include <libgen.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "cli/job_options.hpp"
#include "client/commands.hpp"
#include "client/launch.hpp"
#include "client/session.hpp"
#include "client/submit_map.hpp"
#include "common/hostlist.hpp"
#include "common/multi_prog.hpp"
#include "common/site_script.hpp"
#include "common/strings.hpp"
#include "common/task_layout.hpp"
#include "common/user_db.hpp"

namespace drover::client {
namespace {

volatile sig_atomic_t g_interrupted = 0;
extern "C" void on_wait_signal(int) { g_interrupted = 1; }

Result<std::string> read_any(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("Unable to open file " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Options srun accepts but whose value Drover cannot honour: a clear refusal.
int check_launch_options(const std::string& program, const cli::JobRequest& r, bool& pmix) {
  if (r.mpi) {
    std::string m = to_lower(*r.mpi);
    if (m == "pmix" || m.rfind("pmix_v", 0) == 0) {
      pmix = true;
    } else if (m != "none") {
      std::fprintf(stderr, "%s: error: MPI type '%s' is not available in Drover (it takes --mpi=none or --mpi=pmix)\n",
                   program.c_str(), r.mpi->c_str());
      return 1;
    }
  }
  if (r.cpu_bind) {
    // Drover does not bind tasks to CPUs: any --cpu-bind (none, quiet and
    // verbose too) is said to be unsupported and the tasks run unbound, as
    // Slurm 22.05's srun said it on a cluster whose TaskPlugin cannot bind
    // (task/none, the anchor's; checked for each of those words, 2026-12-08).
    std::fprintf(stderr, "%s: cluster configuration lacks support for cpu binding\n", program.c_str());
  }
  return 0;
}

// srun --multi-prog FILE [ARGS]: the file's text, checked as Slurm's srun
// checks it (its records; every rank has one when the task count is known
// here); nullopt after printing why not. Without -n the file's highest task
// id sets the task count, as Slurm 22.05's srun took it (r.ntasks).
std::optional<std::string> read_multi_prog(cli::JobRequest& r) {
  const std::string& file = r.argv.front();
  auto text = read_any(file);
  if (!text) {
    std::fprintf(stderr, "srun: error: Could not open multi_prog config file %s\n", file.c_str());
    return std::nullopt;
  }
  auto mp = parse_multi_prog(*text, file);
  if (mp && !r.ntasks) {
    if (auto implied = multi_prog_tasks(*mp)) r.ntasks = *implied;
  }
  std::optional<int64_t> ntasks = r.ntasks;
  if (!ntasks && r.nodes && !r.jobid) ntasks = r.nodes->min * r.ntasks_per_node.value_or(1);
  Status st = !mp ? Status(mp.error()) : ntasks ? check_multi_prog_ranks(*mp, file, static_cast<int32_t>(*ntasks))
                                                : Status();
  if (!st) {
    print_error_lines("srun", st.error().message);
    return std::nullopt;
  }
  return *text;
}

v1::CreateStepRequest step_request(const cli::JobRequest& r, const SubmitterContext& who, int64_t job_id) {
  v1::CreateStepRequest s;
  s.set_job_id(job_id);
  if (r.mpi && to_lower(*r.mpi) != "none") s.set_mpi(to_lower(*r.mpi));
  // srun(1): SLURM_JOB_NAME is ignored inside an allocation (it is the job's
  // name, not the step's); a step is named by -J or its command.
  auto origin = r.origins.find("job-name");
  bool env_name = origin != r.origins.end() && origin->second.layer == cli::OptionOrigin::Layer::kEnvironment &&
                  origin->second.where == "SLURM_JOB_NAME";
  bool named = r.job_name && !(env_name && r.jobid);
  std::string name = named ? *r.job_name : r.argv.empty() ? "srun" : r.argv[0];
  if (!named) name = name.substr(name.rfind('/') + 1);
  s.set_name(name);
  s.set_submit_line(who.command_line);
  if (r.ntasks) s.set_ntasks(static_cast<int32_t>(*r.ntasks));
  if (r.nodes) {
    s.set_nodes(static_cast<int32_t>(r.nodes->min));
    s.set_max_nodes(static_cast<int32_t>(r.nodes->max));
  }
  if (r.ntasks_per_node) s.set_ntasks_per_node(static_cast<int32_t>(*r.ntasks_per_node));
  if (r.cpus_per_task) s.set_cpus_per_task(static_cast<int32_t>(*r.cpus_per_task));
  if (r.nodelist) s.set_nodelist(*r.nodelist);
  s.set_exclusive(r.sharing == cli::Sharing::kExclusive);
  // srun(1): an explicit -c implies --exact, as --exclusive does for a step.
  s.set_exact(r.exact || r.cpus_per_task.has_value() || s.exclusive());
  s.set_overlap(r.overlap);
  s.set_no_kill(r.no_kill);
  if (r.mem_per_node_mb) s.set_mem_per_node_mb(*r.mem_per_node_mb);
  if (r.mem_per_cpu_mb) s.set_mem_per_cpu_mb(*r.mem_per_cpu_mb);
  if (r.gpus) {
    s.set_gpus(static_cast<int32_t>(r.gpus->count));
    s.set_gpus_opt(r.gpus->type.empty() ? std::to_string(r.gpus->count) : r.gpus->type + ":" + std::to_string(r.gpus->count));
  }
  if (r.gpus_per_node) s.set_gpus_per_node(static_cast<int32_t>(r.gpus_per_node->count));
  for (const auto& g : r.gres) {
    if (g.name == "gpu") s.set_gpus_per_node(static_cast<int32_t>(g.count));
  }
  std::vector<GresSpec> per_node = r.gres;
  if (r.gpus_per_node) per_node.push_back({"gpu", r.gpus_per_node->type, r.gpus_per_node->count});
  s.set_tres_per_node(tres_per_text(per_node));
  if (r.gpus_per_task) s.set_tres_per_task(tres_per_text({{"gpu", r.gpus_per_task->type, r.gpus_per_task->count}}));
  // Each task's GPUs: --gpu-bind, else what --gpus-per-task or --ntasks-per-gpu (the job's, inside one) imply.
  const int gpus_per_task = r.gpus_per_task ? static_cast<int>(r.gpus_per_task->count) : 0;
  s.set_gpus_per_task(gpus_per_task);
  int ntasks_per_gpu = r.ntasks_per_gpu ? static_cast<int>(*r.ntasks_per_gpu) : 0;
  if (auto it = who.env.find("SLURM_NTASKS_PER_GPU"); ntasks_per_gpu == 0 && r.jobid && it != who.env.end()) {
    ntasks_per_gpu = static_cast<int>(parse_int(it->second).value_or(0));
  }
  s.set_gpu_bind(effective_gpu_bind(r.gpu_bind.value_or(""), gpus_per_task, ntasks_per_gpu));
  if (r.distribution) s.set_distribution(*r.distribution);
  s.set_in_allocation(r.jobid.has_value());
  for (const auto& a : r.argv) s.add_argv(a);
  for (const auto& [k, v] : who.env) s.add_environment(k + "=" + v);
  if (r.label) s.add_environment("SLURM_LABELIO=1");  // as Slurm's srun -l sets it for the tasks
  // As Slurm 22.05's srun sets them for the tasks (-B's or --hint's threads, --ntasks-per-core).
  if (r.threads_per_core) s.add_environment("SLURM_THREADS_PER_CORE=" + std::to_string(*r.threads_per_core));
  if (r.ntasks_per_core) s.add_environment("SLURM_NTASKS_PER_CORE=" + std::to_string(*r.ntasks_per_core));
  if (ntasks_per_gpu > 0) s.add_environment("SLURM_NTASKS_PER_TRES=" + std::to_string(ntasks_per_gpu));
  // The tasks' SLURM_JOB_NAME, as Slurm's srun sets it: -J, else the one srun
  // has (inside a batch job or salloc, the job's), else the step's name.
  if (named || !who.env.count("SLURM_JOB_NAME")) s.add_environment("SLURM_JOB_NAME=" + name);
  s.set_export_spec(export_text(r.export_env));
  s.set_work_dir(work_dir_of(r, who));
  if (r.stdout_path) s.set_stdout_pattern(*r.stdout_path);
  if (r.stderr_path) s.set_stderr_pattern(*r.stderr_path);
  if (r.open_mode != cli::OpenMode::kDefault) s.set_open_append(r.open_mode == cli::OpenMode::kAppend);
  // srun(1) -i: srun's stdin goes to every task by default and with "all"
  // (or -1); a task number sends it to that task alone; "none" and any other
  // text (a file name pattern) read no stdin from srun.
  const std::string in = r.stdin_path ? to_lower(*r.stdin_path) : "all";
  const std::optional<int64_t> task = parse_int(in, true);
  if (in == "all" || task == -1) s.set_stdin_all(true);
  else if (task && *task >= 0 && *task <= INT32_MAX) s.set_stdin_task(static_cast<int32_t>(*task));
  else s.set_stdin_pattern(in == "none" ? "/dev/null" : *r.stdin_path);
  if (r.kill_on_bad_exit) s.set_kill_on_bad_exit(*r.kill_on_bad_exit);
  // --task-prolog/--task-epilog run on the nodes: a relative path is srun's.
  auto program = [&](const std::string& p) { return p.empty() || p[0] == '/' ? p : who.cwd + "/" + p; };
  if (r.task_prolog) s.set_task_prolog(program(*r.task_prolog));
  if (r.task_epilog) s.set_task_epilog(program(*r.task_epilog));
  // -t is the step's own limit inside an allocation; srun's own allocation has it as the job's, and its
  // step none besides (Slurm 22.05: squeue -s showed UNLIMITED, and OverTimeLimit let the step run on).
  if (r.jobid && r.time_limit && *r.time_limit != kInfinite) s.set_time_limit_s(*r.time_limit);
  mode_t m = umask(0);
  umask(m);
  s.set_umask(static_cast<int32_t>(m));
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string short_host = host;
  s.set_srun_host(short_host.substr(0, short_host.find('.')));
  s.set_srun_pid(static_cast<int32_t>(getpid()));
  return s;
}

struct Parsed {
  cli::JobRequest req;
  int exit = -1;  // >= 0: exit with this now
};

Parsed parse(cli::SubmitCommand cmd, const Invocation& inv) {
  cli::SubmitInputs in;
  in.command = cmd;
  in.args = inv.args;
  in.env = inv.env;
  in.read_file = read_any;
  in.read_stdin = [] { return Result<std::string>(std::string()); };
  in.now = static_cast<UnixTime>(std::time(nullptr));
  in.gres_types = configured_gres_types(inv);
  Parsed p;
  auto parsed = cli::parse_submission(in);
  if (!parsed) {
    write_out(parsed.error().text, stderr);
    p.exit = parsed.error().exit_code;
    return p;
  }
  if (parsed->action == cli::SubmitAction::kPrint) {
    write_out(parsed->output, stdout);
    p.exit = 0;
    return p;
  }
  for (const auto& w : parsed->warnings) write_out(w + (w.empty() || w.back() != '\n' ? "\n" : ""), stderr);
  p.req = std::move(parsed->request);
  return p;
}

// Inside an allocation SLURM_NNODES, SLURM_NTASKS and SLURM_NTASKS_PER_NODE
// carry the job's shape into srun, and -N, -n and --ntasks-per-node on the
// command line each replace only their own, as Slurm 22.05's srun took them
// (anchor cluster, a job of -N2 --ntasks-per-node=2): `srun -N1` there asks
// the job's 4 tasks of one node; a --ntasks-per-node that does not match the
// tasks and nodes is dropped with Slurm's warning (`srun -n3`). (Fewer tasks
// than nodes set the nodes to the tasks when the options are read: `srun -n1`.)
void shape_from_command_line(cli::JobRequest& r) {
  if (!r.jobid) return;
  // Slurm warned for 3 tasks on 2 nodes (not whole per node) and for more tasks than nodes x per node
  // (-N1 of 4 tasks, --ntasks-per-node=1 of 4 on 2), not for fewer that divide (-n2 on 2 nodes at 2 per node).
  if (r.ntasks && r.nodes && r.ntasks_per_node && r.nodes->min > 0 &&
      (*r.ntasks > *r.ntasks_per_node * r.nodes->min || *r.ntasks % r.nodes->min != 0)) {
    if (!r.quiet) {
      std::fprintf(stderr,
                   "srun: Warning: can't honor --ntasks-per-node set to %lld which doesn't match the requested tasks "
                   "%lld with the number of requested nodes %lld. Ignoring --ntasks-per-node.\n",
                   static_cast<long long>(*r.ntasks_per_node), static_cast<long long>(*r.ntasks),
                   static_cast<long long>(r.nodes->min));
    }
    r.ntasks_per_node.reset();
  }
}

int immediate_seconds(const cli::JobRequest& r) {
  if (!r.immediate) return -1;
  return r.immediate_timeout ? static_cast<int>(*r.immediate_timeout) : 0;
}

// Ends the job's allocation; a failure is said, since the allocation may then
// stay until its time limit.
void release(const std::string& program, ControllerApi& api, int64_t job_id, int exit_code, int exit_signal) {
  auto r = api.complete_job(job_id, exit_code, exit_signal);
  if (!r) {
    std::fprintf(stderr, "%s: error: Unable to release job allocation %lld: %s\n", program.c_str(),
                 static_cast<long long>(job_id), r.error().message.c_str());
  }
}

// What salloc tells its user when the allocation ends under its command
// (scancel, the time limit, a failed node), as Slurm's salloc words it.
std::string revoked_text(const v1::JobRecord* rec, int64_t job_id) {
  if (rec && rec->state() == v1::TIMEOUT) {
    return fmt::format("salloc: Job {} has exceeded its time limit and its allocation has been revoked.\n", job_id);
  }
  return fmt::format("salloc: Job allocation {} has been revoked.\n", job_id);
}

// Whether the allocation has ended (its job is no longer running); if so,
// says it as Slurm's salloc does. A controller that does not answer is
// asked again later (false).
bool said_revoked(ControllerApi& api, int64_t job_id) {
  auto r = api.poll_allocation(job_id);
  if (!r) return false;
  const v1::JobRecord* rec = r->jobs_size() > 0 ? &r->jobs(0) : nullptr;
  if (rec && rec->state() == v1::RUNNING && !rec->completing()) return false;
  write_out(revoked_text(rec, job_id), stderr);
  return true;
}

struct CommandEnd {
  int status = 0;        // waitpid's
  bool revoked = false;  // the allocation ended first
};

// Waits for salloc's command; meanwhile asks the controller once a second
// whether the allocation still stands. When it is revoked, says so and, with
// -K, signals the command (as Slurm's salloc does, it otherwise waits for it).
CommandEnd wait_for_command(ControllerApi& api, int64_t job_id, pid_t pid, std::optional<int> kill_signal) {
  ControllerApi::OneAttempt polling(api);
  CommandEnd end;
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  auto next_check = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  for (;;) {
    pid_t w = waitpid(pid, &end.status, WNOHANG);
    if (w == pid || (w < 0 && errno != EINTR)) break;
    if (pidfd >= 0) {
      pollfd fd{pidfd, POLLIN, 0};
      (void)poll(&fd, 1, 1000);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    if (end.revoked || std::chrono::steady_clock::now() < next_check) continue;
    next_check = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    if (!said_revoked(api, job_id)) continue;
    end.revoked = true;
    if (kill_signal) kill(pid, *kill_signal != 0 ? *kill_signal : isatty(STDIN_FILENO) ? SIGHUP : SIGTERM);
  }
  if (pidfd >= 0) close(pidfd);
  return end;
}

bool partition_limited(const v1::JobRecord& rec) {
  return rec.reason() == "PartitionTimeLimit" || rec.reason() == "PartitionNodeLimit";
}
constexpr std::string_view kPartitionNote = "Requested partition configuration not available now";

// What Slurm 22.05's srun and salloc told of a job its controller would not
// start now (anchor cluster): a partition's limit first, then a hold. "" when
// nothing is said.
std::string_view waiting_note(const v1::JobRecord& rec) {
  if (partition_limited(rec)) return kPartitionNote;
  if (rec.hold() != v1::HOLD_NONE) return "Job is in held state, pending scheduler release";
  return "";
}

// Why --immediate gives up (salloc's --immediate=N has its timer's lines),
// in Slurm 22.05's words: a partition's limit; a hold or a begin time in the
// future (its "dependency problem"); otherwise busy nodes.
std::string immediate_refusal(const std::string& program, const v1::JobRecord& rec, long long id) {
  std::string_view why;
  if (partition_limited(rec)) {
    why = kPartitionNote;
  } else if (rec.hold() != v1::HOLD_NONE || rec.reason() == "BeginTime") {
    why = "Job dependency problem";
  }
  const bool salloc = program == "salloc";
  std::string text = why.empty() ? fmt::format("{}: error: Unable to allocate resources: Requested nodes are busy\n", program)
                     : salloc    ? fmt::format("salloc: error: Job submit/allocate failed: {}\n", why)
                                 : fmt::format("srun: error: Unable to allocate resources: {}\n", why);
  if (salloc) text += fmt::format("salloc: Job allocation {} has been revoked.\n", id);
  return text;
}

}  // namespace

Allocation allocate(const std::string& program, ControllerApi& api, const v1::JobDescriptor& job, int immediate_s,
                    bool quiet, bool watched) {
  Allocation a;
  auto sub = api.submit(job, false);
  if (!sub) {
    if (sub.error().unreachable) {
      write_out(unreachable_text(program, sub.error(), api.endpoint()), stderr);
    } else {
      // The controller words a refusal as sbatch's ("Batch job submission
      // failed: X", after any detail lines); srun and salloc say it their
      // way, as Slurm's do (and as job_option_table's refusals).
      const std::string& m = sub.error().message;
      const std::string lead = program == "salloc" ? "Job submit/allocate failed: " : "Unable to allocate resources: ";
      constexpr std::string_view kBatch = "Batch job submission failed: ";
      std::string text;
      bool led = false;
      for (const auto& line : split(m, '\n')) {
        if (line.rfind(kBatch, 0) == 0) {
          text += lead + line.substr(kBatch.size()) + "\n";
          led = true;
        } else if (!line.empty()) {
          text += line + "\n";
        }
      }
      if (!led) text = "Unable to allocate resources: " + text;
      print_error_lines(program, text);
    }
    a.failed = 1;
    return a;
  }
  a.job_id = sub->job_id();
  ControllerApi::OneAttempt polling(api);  // the loop below asks again when the controller is away
  struct sigaction sa {}, old_int {}, old_term {};
  sa.sa_handler = on_wait_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  auto restore = [&] {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
  };
  auto start = std::chrono::steady_clock::now();
  bool said = false;
  int delay_ms = 2;
  for (;;) {
    auto r = watched ? api.poll_allocation(a.job_id) : api.get_jobs({a.job_id}, false);
    if (r && r->jobs_size() > 0) {
      const v1::JobRecord& rec = r->jobs(0);
      if (rec.state() == v1::RUNNING && rec.configuring() && !g_interrupted) {
        // Its PrologSlurmctld is running: granted once that has ended.
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
        delay_ms = std::min(delay_ms * 2, 200);
        continue;
      }
      if (rec.state() == v1::RUNNING) {
        a.waited = std::chrono::steady_clock::now() - start;
        if (said && !quiet) {
          std::fprintf(stderr, "%s: job %lld has been allocated resources\n", program.c_str(), static_cast<long long>(a.job_id));
        }
        a.rec = rec;
        restore();
        return a;
      }
      if (rec.state() != v1::PENDING) {
        std::fprintf(stderr, "%s: error: Job allocation %lld has been revoked.\n", program.c_str(),
                     static_cast<long long>(a.job_id));
        a.failed = 1;
        restore();
        return a;
      }
      auto waited = std::chrono::steady_clock::now() - start;
      bool evaluated = rec.last_sched_eval() > 0;
      bool give_up = immediate_s >= 0 && ((immediate_s == 0 && evaluated) || waited > std::chrono::seconds(immediate_s) ||
                                          (immediate_s == 0 && waited > std::chrono::seconds(2)));
      const long long id = static_cast<long long>(a.job_id);
      const bool salloc = program == "salloc";
      if (give_up && !said && immediate_s > 0 && !quiet) {
        // --immediate=N waited: it said so first, as Slurm 22.05's did.
        if (salloc) std::fprintf(stderr, "salloc: Pending job allocation %lld\n", id);
        std::fprintf(stderr, "%s: job %lld queued and waiting for resources\n", program.c_str(), id);
      }
      if (give_up || g_interrupted) {
        release(program, api, a.job_id, 0, 0);  // a pending allocation is withdrawn
        // Slurm 22.05's lines on the anchor cluster: salloc's --immediate=N
        // ran out on a timer; a signal (Ctrl-C, timeout's SIGTERM) ends the wait.
        if (give_up && salloc && immediate_s > 0) {
          std::fprintf(stderr, "salloc: error: Unable to allocate resources: Connection timed out\n"
                               "salloc: Job allocation %lld has been revoked.\n", id);
        } else if (give_up) {
          write_out(immediate_refusal(program, rec, id), stderr);
        } else if (salloc) {
          std::fprintf(stderr, "salloc: Job allocation %lld has been revoked.\nsalloc: Job aborted due to signal\n", id);
        } else {
          std::fprintf(stderr, "srun: Job allocation %lld has been revoked\nsrun: Force Terminated JobId=%lld\n", id, id);
        }
        a.failed = 1;
        restore();
        return a;
      }
      if (!said && evaluated && immediate_s < 0) {
        if (!quiet) {
          if (std::string_view note = waiting_note(rec); !note.empty()) {
            std::fprintf(stderr, "%s: %.*s\n", program.c_str(), static_cast<int>(note.size()), note.data());
          }
          if (program == "salloc") {
            std::fprintf(stderr, "salloc: Pending job allocation %lld\n", static_cast<long long>(a.job_id));
          }
          std::fprintf(stderr, "%s: job %lld queued and waiting for resources\n", program.c_str(),
                       static_cast<long long>(a.job_id));
        }
        said = true;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    delay_ms = std::min(delay_ms * 2, 200);
  }
}

std::vector<std::string> allocation_env(const v1::JobRecord& rec, const std::string& cluster,
                                        const std::string& conf_path) {
  std::vector<std::string> nodes;
  std::vector<int> cpus, tasks;
  for (const auto& t : rec.alloc().nodes()) {
    nodes.push_back(t.node());
    cpus.push_back(t.cpus());
    tasks.push_back(std::max(1, t.tasks()));
  }
  const v1::JobDescriptor& d = rec.desc();
  std::string id = std::to_string(rec.job_id());
  std::string list = hostlist_compress(nodes);
  std::vector<std::string> env = {
      "SLURM_JOB_ID=" + id,
      "SLURM_JOBID=" + id,
      "SLURM_JOB_NAME=" + d.name(),
      "SLURM_JOB_NODELIST=" + list,
      "SLURM_NODELIST=" + list,
      "SLURM_JOB_NUM_NODES=" + std::to_string(nodes.size()),
      "SLURM_NNODES=" + std::to_string(nodes.size()),
      "SLURM_JOB_CPUS_PER_NODE=" + compress_counts(cpus),
      "SLURM_JOB_PARTITION=" + rec.partition(),
      "SLURM_JOB_ACCOUNT=" + rec.account(),
      "SLURM_JOB_QOS=" + rec.qos(),
      "SLURM_CLUSTER_NAME=" + cluster,
      "SLURM_SUBMIT_DIR=" + (d.submit_dir().empty() ? d.work_dir() : d.submit_dir()),
      "SLURM_SUBMIT_HOST=" + d.submit_host(),
      "SLURM_CONF=" + conf_path,
      "DROVER_CONF=" + conf_path,
  };
  const int ntasks = d.ntasks() > 0 ? d.ntasks() : d.ntasks_per_node() * static_cast<int>(nodes.size());
  if (ntasks > 0) {
    env.push_back("SLURM_NTASKS=" + std::to_string(ntasks));
    env.push_back("SLURM_NPROCS=" + std::to_string(ntasks));
  }
  env.push_back("SLURM_TASKS_PER_NODE=" + compress_counts(job_tasks_per_node(cpus, tasks, ntasks > 0, d.cpus_per_task())));
  if (d.ntasks_per_node() > 0) env.push_back("SLURM_NTASKS_PER_NODE=" + std::to_string(d.ntasks_per_node()));
  if (d.cpus_per_task() > 0) env.push_back("SLURM_CPUS_PER_TASK=" + std::to_string(d.cpus_per_task()));
  // The memory and GPUs asked for, as given (Slurm 22.05's salloc sets only those).
  if (d.mem_per_gpu_mb() == 0 && d.has_mem_per_node_mb() && d.mem_per_node_mb() > 0) {
    env.push_back("SLURM_MEM_PER_NODE=" + std::to_string(d.mem_per_node_mb()));
  } else if (d.mem_per_gpu_mb() == 0 && d.has_mem_per_cpu_mb()) {
    env.push_back("SLURM_MEM_PER_CPU=" + std::to_string(d.mem_per_cpu_mb()));
  }
  const std::pair<const char*, std::string> gpu_opts[] = {
      {"SLURM_GPUS", d.gpus().text()},
      {"SLURM_GPUS_PER_NODE", d.gpus_per_node().text()},
      {"SLURM_GPUS_PER_TASK", d.gpus_per_task().text()},
      {"SLURM_CPUS_PER_GPU", d.cpus_per_gpu() > 0 ? std::to_string(d.cpus_per_gpu()) : ""},
      {"SLURM_MEM_PER_GPU", d.mem_per_gpu_text()},
      {"SLURM_NTASKS_PER_GPU", d.ntasks_per_gpu() > 0 ? std::to_string(d.ntasks_per_gpu()) : ""},
  };
  for (const auto& [k, v] : gpu_opts) {
    if (!v.empty()) env.push_back(std::string(k) + "=" + v);
  }
  return env;
}

namespace {

// srun --prolog/--epilog, else slurm.conf's SrunProlog/SrunEpilog; "" for none.
std::string srun_script(const std::optional<std::string>& option, const Invocation& inv, const char* key) {
  std::string v = option ? std::string(trim(*option)) : command_conf_value(inv.config_flag, key);
  return iequals(v, "none") ? "" : v;
}

// Runs an srun prolog or epilog as srun(1) does, on this host as the user:
// the step's command and arguments as its arguments, srun's environment
// (`own_env`) with the job's variables and SLURM_SCRIPT_CONTEXT
// (prolog_srun, epilog_srun); stdout and stderr are srun's. A program that
// cannot be run is said and skipped (0), as Slurm's srun skips it. Its exit
// status, 128+N for signal N.
int run_srun_script(const std::string& path, const std::string& context, const std::vector<std::string>& step_argv,
                    const std::map<std::string, std::string>& own_env, const std::vector<std::string>& job_env) {
  if (access(path.c_str(), R_OK | X_OK) != 0) {
    std::fprintf(stderr, "srun: Access denied for %s: %s\n", path.c_str(), std::strerror(errno));
    return 0;
  }
  std::map<std::string, std::string> env = own_env;
  for (const auto& kv : job_env) {
    auto eq = kv.find('=');
    env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  env["SLURM_SCRIPT_CONTEXT"] = context;
  ScriptOptions so;
  so.argv = step_argv;
  for (const auto& [k, v] : env) so.env.push_back(k + "=" + v);
  so.keep_output = false;
  so.stdout_fd = STDOUT_FILENO;
  so.stderr_fd = STDERR_FILENO;
  so.cwd.clear();  // srun's own directory
  std::fflush(stdout);
  std::fflush(stderr);
  const ScriptRun run = run_script(path, so);
  if (!run.started) {
    std::fprintf(stderr, "srun: error: %s\n", run.error.c_str());
    return 1;
  }
  return run.signal ? 128 + run.signal : run.exit_code;
}

// The job's variables an srun prolog/epilog sees (Slurm's srun gives it the
// allocation's, the user's and, for the epilog, the step's).
std::vector<std::string> srun_script_env(ControllerApi& api, const Allocation* a, int64_t job_id) {
  v1::JobRecord rec;
  if (a) {
    rec = a->rec;
  } else if (auto r = api.get_jobs({job_id}, false); r && r->jobs_size() > 0) {
    rec = r->jobs(0);
  } else {
    return {"SLURM_JOB_ID=" + std::to_string(job_id), "SLURM_JOBID=" + std::to_string(job_id)};
  }
  std::vector<std::string> env = allocation_env(rec, api.endpoint().cluster, api.endpoint().conf_path);
  env.push_back("SLURM_JOB_USER=" + rec.user());
  env.push_back("SLURM_JOB_UID=" + std::to_string(rec.uid()));
  return env;
}

// srun --test-only: the job is planned, not queued, and nothing runs; the
// plan is said as sbatch --test-only says it. A refusal reads as Slurm's
// srun words it ("allocation failure: ..."), Drover's detail lines after.
int test_only(ControllerApi& api, const cli::JobRequest& req, const SubmitterContext& who) {
  auto reply = api.submit(descriptor_from_request(req, who), true);
  if (!reply) {
    if (reply.error().unreachable) {
      write_out(unreachable_text("srun", reply.error(), api.endpoint()), stderr);
      return 1;
    }
    print_test_only_refusal("srun", reply.error().message);
    return 1;
  }
  for (const auto& w : reply->warnings()) std::fprintf(stderr, "srun: %s\n", w.c_str());
  write_out(cli::test_only_reply(req, reply->job_id(), reply->planned_start(), reply->planned_cpus(),
                                 reply->planned_nodes(), reply->planned_partition()),
            stderr);
  return 0;
}

}  // namespace

int srun_main(const Args& args) {
  Invocation inv = invocation("srun", args);
  Parsed p = parse(cli::SubmitCommand::kSrun, inv);
  if (p.exit >= 0) return p.exit;
  shape_from_command_line(p.req);
  bool pmix = false;
  if (int rc = check_launch_options("srun", p.req, pmix); rc) return rc;
  if (p.req.argv.empty()) {
    std::fprintf(stderr, "srun: fatal: No command given to execute.\n");
    return 1;
  }
  std::optional<std::string> multi_prog;
  if (p.req.multi_prog && !(multi_prog = read_multi_prog(p.req))) return 1;
  const cli::JobRequest& req = p.req;
#if !DROVER_HAVE_PMIX
  if (pmix && !req.quiet) {
    std::fprintf(stderr, "srun: warning: --mpi=pmix: this Drover was built without PMIx (libpmix-dev), so its "
                         "agents serve no PMIx (no PMIX_* variables); the tasks run, but a program that calls "
                         "PMIx_Init (an MPI program started directly by srun) cannot wire up: start it with mpirun "
                         "inside the allocation\n");
  }
#endif
  auto api = connect_or_report(inv);
  if (!api) return 1;
  if (req.clusters && !names_this_cluster("srun", *req.clusters, *api)) return 1;
  SubmitterContext who = current_submitter();
  if (!add_propagated_rlimits("srun", req, inv.config_flag, who)) return 1;
  auto step = [&](int64_t job_id) {
    v1::CreateStepRequest s = step_request(req, who, job_id);
    if (multi_prog) s.set_multi_prog(*multi_prog);
    return s;
  };
  StepOutput out{req.label, req.unbuffered, req.quiet, req.verbose};
  out.quit_on_interrupt = req.quit_on_interrupt;
  out.disable_status = req.disable_status;
  // -W, else slurm.conf's WaitTime (srun(1)).
  int64_t wait_s = req.task_wait_s.value_or(0);
  if (!req.task_wait_s) wait_s = parse_int(command_conf_value(inv.config_flag, "WaitTime")).value_or(0);
  out.task_wait_s = static_cast<int>(std::clamp<int64_t>(wait_s, 0, 65533));
  if (auto kw = parse_int(command_conf_value(inv.config_flag, "KillWait")); kw && *kw >= 0) {
    out.kill_wait_s = static_cast<int>(*kw);
  }
  if (req.pty && !req.test_only) {  // --test-only runs nothing: Slurm's says nothing of the terminal
    // srun(1) --pty: task 0 in a pseudo-terminal of the size of srun's own
    // terminal; without one on stdout the option is disregarded, as Slurm's
    // srun does (with the same two lines).
    winsize ws{};
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0) {
      std::fprintf(stderr, "srun: error: ioctl(TIOCGWINSZ): %s\n", std::strerror(errno));
      std::fprintf(stderr, "srun: error: Not using a pseudo-terminal, disregarding --pty option\n");
    } else {
      out.pty = true;
      out.pty_rows = ws.ws_row;
      out.pty_cols = ws.ws_col;
      out.unbuffered = true;
    }
  }
  // srun --prolog/--epilog (SrunProlog/SrunEpilog) run here around the step.
  // Drover's difference: the prolog runs before the step is created (the
  // controller launches a step's tasks as it creates it), so it has the
  // job's variables but no SLURM_STEP_ID, and a failing prolog runs nothing.
  const std::string prolog = srun_script(req.srun_prolog, inv, "SrunProlog");
  const std::string epilog = srun_script(req.srun_epilog, inv, "SrunEpilog");
  int64_t step_id = -1;
  out.created_step = &step_id;
  auto run = [&](int64_t job_id, const Allocation* a) {
    std::vector<std::string> job_env;
    if (!prolog.empty() || !epilog.empty()) job_env = srun_script_env(*api, a, job_id);
    if (!prolog.empty()) {
      if (int prc = run_srun_script(prolog, "prolog_srun", req.argv, who.env, job_env); prc != 0) {
        std::fprintf(stderr, "srun: error: srun prolog failed rc = %d. Aborting step.\n", prc);
        return 1;
      }
    }
    int rc = run_step("srun", *api, step(job_id), out);
    if (!epilog.empty()) {
      if (step_id >= 0) {
        job_env.push_back("SLURM_STEP_ID=" + std::to_string(step_id));
        job_env.push_back("SLURM_STEPID=" + std::to_string(step_id));
      }
      if (int erc = run_srun_script(epilog, "epilog_srun", req.argv, who.env, job_env); erc != 0) {
        std::fprintf(stderr, "srun: error: srun epilog failed status=%d\n", erc);
      }
    }
    return rc;
  };
  // Inside an allocation too, --test-only plans a job of its own and runs
  // nothing (as Slurm 22.05's srun did on the anchor cluster).
  if (req.test_only) return test_only(*api, req, who);
  if (req.jobid) {
    out.immediate_s = immediate_seconds(req);  // -I: give up when the step would wait
    return run(*req.jobid, nullptr);
  }
  v1::JobDescriptor d = descriptor_from_request(req, who);
  // The job srun makes for itself shows its command as given (Command=bash,
  // squeue %o), as Slurm 22.05's did on the anchor cluster; salloc's none.
  if (!req.argv.empty()) d.set_command(req.argv[0]);
  if (int rc = apply_run_as(req, "srun", d)) return rc;
  Allocation a = allocate("srun", *api, d, immediate_seconds(req), req.quiet, true);
  if (a.failed) return a.failed;
  out.own_allocation = true;
  int rc = run(a.job_id, &a);
  release("srun", *api, a.job_id, rc, 0);
  return rc;
}

int salloc_main(const Args& args) {
  Invocation inv = invocation("salloc", args);
  Parsed p = parse(cli::SubmitCommand::kSalloc, inv);
  if (p.exit >= 0) return p.exit;
  cli::JobRequest& req = p.req;
  if (req.argv.empty() && !req.no_shell) {
    const char* shell = std::getenv("SHELL");
    auto u = user_by_uid(getuid());
    req.argv.push_back(shell && *shell ? shell : u && !u->shell.empty() ? u->shell : "/bin/sh");
  }
  // -D is where salloc runs the command; the job's WorkDir and
  // SLURM_SUBMIT_DIR stay where salloc was started, and a directory that
  // cannot be entered ends salloc before it asks (Slurm 22.05, anchor cluster).
  SubmitterContext who = current_submitter();
  if (req.chdir && chdir(req.chdir->c_str()) != 0) {
    std::fprintf(stderr, "salloc: error: chdir(%s): %s\n", req.chdir->c_str(), std::strerror(errno));
    return 1;
  }
  auto api = connect_or_report(inv);
  if (!api) return 1;
  if (req.clusters && !names_this_cluster("salloc", *req.clusters, *api)) return 1;
  v1::JobDescriptor d = descriptor_from_request(req, who);
  d.set_work_dir(who.cwd);
  if (int rc = apply_run_as(req, "salloc", d)) return rc;
  Allocation a = allocate("salloc", *api, d, immediate_seconds(req), req.quiet, !req.no_shell);
  if (a.failed) return a.failed;
  if (!req.quiet) std::fprintf(stderr, "salloc: Granted job allocation %lld\n", static_cast<long long>(a.job_id));
  // The terminal's bell at the grant: --bell always, --no-bell never, and
  // otherwise after a wait of more than ten seconds; only on a terminal.
  if (req.bell.value_or(a.waited > std::chrono::seconds(10)) && isatty(STDOUT_FILENO)) {
    std::fputs("\a", stdout);
    std::fflush(stdout);
  }
  // --no-shell: the allocation stays, for srun --jobid and scancel, until its
  // time limit (salloc(1)); nothing runs in it now.
  if (req.no_shell) return 0;
  // salloc's own environment, the allocation's variables over it (each name once).
  std::map<std::string, std::string> vars = who.env;
  for (const auto& kv : allocation_env(a.rec, api->endpoint().cluster, api->endpoint().conf_path)) {
    const auto eq = kv.find('=');
    vars[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  vars["SLURM_NODE_ALIASES"] = "(null)";  // no cloud nodes, as Slurm 22.05's salloc shows it
  for (auto& [k, v] : option_output_env(req)) vars[k] = std::move(v);
  std::vector<std::string> env;
  for (const auto& [k, v] : vars) env.push_back(k + "=" + v);
  signal(SIGINT, SIG_IGN);  // Ctrl-C belongs to the command (salloc(1))
  pid_t pid = fork();
  if (pid == 0) {
    signal(SIGINT, SIG_DFL);
    std::vector<char*> argv, envp;
    for (auto& a2 : req.argv) argv.push_back(a2.data());
    argv.push_back(nullptr);
    for (auto& kv : env) envp.push_back(kv.data());
    envp.push_back(nullptr);
    execvpe(argv[0], argv.data(), envp.data());
    // Slurm 22.05's words and status (anchor cluster).
    std::fprintf(stderr, "salloc: error: _fork_command: Unable to find command \"%s\"\n", req.argv[0].c_str());
    _exit(1);
  }
  CommandEnd end = wait_for_command(*api, a.job_id, pid, req.kill_command_signal);
  const int status = end.status;
  int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  // The command may have ended because the allocation did (scancel ends its
  // srun at once) before the next look at the job: Slurm's salloc, told at
  // once, said only that it was revoked (anchor cluster).
  if (end.revoked || said_revoked(*api, a.job_id)) return rc;  // nothing left to give back
  if (!req.quiet) std::fprintf(stderr, "salloc: Relinquishing job allocation %lld\n", static_cast<long long>(a.job_id));
  release("salloc", *api, a.job_id, WIFEXITED(status) ? WEXITSTATUS(status) : 0, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  // Slurm 22.05's salloc then hears of the job's end and says so; a race
  // there (anchor cluster, 2026-12-06: 2 of 10 `salloc true`, 3 of 5
  // `salloc sleep 1`; an earlier session saw it every time). Drover always says it.
  if (!req.quiet) std::fprintf(stderr, "salloc: Job allocation %lld has been revoked.\n", static_cast<long long>(a.job_id));
  return rc;
}

}  // namespace drover::client
