// parse_submission: command line, input environment and #SBATCH directives
// merged into one JobRequest (see job_options.hpp for the precedence rules).
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "cli/job_options.hpp"
#include "cli/sbatch_script.hpp"
#include "common/strings.hpp"
#include "core/constraint.hpp"

namespace drover::cli {
namespace {

struct EnvVar {
  std::string_view var;
  std::string_view option;
};

// INPUT ENVIRONMENT VARIABLES of sbatch(1) that Drover reads.
const std::vector<EnvVar> kSbatchEnv{
    {"SBATCH_ACCOUNT", "account"},           {"SBATCH_ACCTG_FREQ", "acctg-freq"},
    {"SBATCH_ARRAY_INX", "array"},           {"SBATCH_BATCH", "batch"},
    {"SBATCH_CLUSTERS", "clusters"},         {"SLURM_CLUSTERS", "clusters"},
    {"SBATCH_CONSTRAINT", "constraint"},     {"SBATCH_CONTAINER", "container"},
    {"SBATCH_CORE_SPEC", "core-spec"},       {"SBATCH_CPUS_PER_GPU", "cpus-per-gpu"},
    {"SBATCH_DEBUG", "verbose"},             {"SBATCH_DELAY_BOOT", "delay-boot"},
    {"SBATCH_DISTRIBUTION", "distribution"}, {"SBATCH_ERROR", "error"},
    {"SBATCH_EXCLUSIVE", "exclusive"},       {"SBATCH_EXPORT", "export"},
    {"SBATCH_GET_USER_ENV", "get-user-env"}, {"SBATCH_GPU_BIND", "gpu-bind"},
    {"SBATCH_GPU_FREQ", "gpu-freq"},         {"SBATCH_GPUS", "gpus"},
    {"SBATCH_GPUS_PER_NODE", "gpus-per-node"}, {"SBATCH_GPUS_PER_TASK", "gpus-per-task"},
    {"SBATCH_GRES", "gres"},                 {"SBATCH_GRES_FLAGS", "gres-flags"},
    {"SBATCH_HINT", "hint"},                 {"SLURM_HINT", "hint"},
    {"SBATCH_IGNORE_PBS", "ignore-pbs"},     {"SBATCH_INPUT", "input"},
    {"SBATCH_JOB_NAME", "job-name"},         {"SBATCH_MEM_BIND", "mem-bind"},
    {"SBATCH_MEM_PER_CPU", "mem-per-cpu"},   {"SBATCH_MEM_PER_GPU", "mem-per-gpu"},
    {"SBATCH_MEM_PER_NODE", "mem"},          {"SBATCH_NETWORK", "network"},
    {"SBATCH_NO_KILL", "no-kill"},           {"SBATCH_NO_REQUEUE", "no-requeue"},
    {"SBATCH_OPEN_MODE", "open-mode"},       {"SBATCH_OUTPUT", "output"},
    {"SBATCH_OVERCOMMIT", "overcommit"},     {"SBATCH_PARTITION", "partition"},
    {"SBATCH_QOS", "qos"},                   {"SBATCH_REQUEUE", "requeue"},
    {"SBATCH_RESERVATION", "reservation"},   {"SBATCH_SIGNAL", "signal"},
    {"SBATCH_TIMELIMIT", "time"},            {"SBATCH_WAIT", "wait"},
    {"SBATCH_WCKEY", "wckey"},
};

// INPUT ENVIRONMENT VARIABLES of srun(1) that Drover reads. Inside a job these
// carry the allocation's shape (SLURM_NTASKS, SLURM_JOB_ID, ...) into srun.
const std::vector<EnvVar> kSrunEnv{
    {"SLURM_ACCOUNT", "account"},           {"SLURM_ACCTG_FREQ", "acctg-freq"},
    {"SLURM_CLUSTERS", "clusters"},         {"SLURM_CONSTRAINT", "constraint"},
    {"SLURM_CPU_BIND", "cpu-bind"},         {"SLURM_CPUS_PER_GPU", "cpus-per-gpu"},
    {"SLURM_DEBUG", "verbose"},             {"SLURM_DEPENDENCY", "dependency"},
    {"SLURM_DISTRIBUTION", "distribution"}, {"SLURM_EXACT", "exact"},
    {"SLURM_EXCLUSIVE", "exclusive"},       {"SLURM_EXPORT_ENV", "export"},
    {"SLURM_GPUS", "gpus"},                 {"SLURM_GPUS_PER_NODE", "gpus-per-node"},
    {"SLURM_GPUS_PER_TASK", "gpus-per-task"}, {"SLURM_GPU_BIND", "gpu-bind"},
    {"SLURM_GRES", "gres"},
    {"SLURM_GRES_FLAGS", "gres-flags"},     {"SLURM_HINT", "hint"},
    {"SLURM_IMMEDIATE", "immediate"},       {"SLURM_JOB_ID", "jobid"},
    {"SLURM_JOB_NAME", "job-name"},         {"SLURM_NNODES", "nodes"},
    {"SLURM_JOB_NUM_NODES", "nodes"},       {"SLURM_KILL_BAD_EXIT", "kill-on-bad-exit"},
    {"SLURM_LABELIO", "label"},             {"SLURM_MEM_PER_CPU", "mem-per-cpu"},
    {"SLURM_MEM_PER_GPU", "mem-per-gpu"},   {"SLURM_MEM_PER_NODE", "mem"},
    {"SLURM_MPI_TYPE", "mpi"},              {"SLURM_NO_KILL", "no-kill"},
    {"SLURM_NPROCS", "ntasks"},             {"SLURM_NTASKS", "ntasks"},
    {"SLURM_NTASKS_PER_NODE", "ntasks-per-node"}, {"SLURM_OPEN_MODE", "open-mode"},
    {"SLURM_OVERCOMMIT", "overcommit"},     {"SLURM_OVERLAP", "overlap"},
    {"SLURM_PARTITION", "partition"},       {"SLURM_QOS", "qos"},
    {"SLURM_RESERVATION", "reservation"},   {"SLURM_SIGNAL", "signal"},
    {"SLURM_STDERRMODE", "error"},          {"SLURM_STDINMODE", "input"},
    {"SLURM_STDOUTMODE", "output"},         {"SLURM_TASK_EPILOG", "task-epilog"},
    {"SLURM_TASK_PROLOG", "task-prolog"},   {"SLURM_TIMELIMIT", "time"},
    {"SLURM_UNBUFFEREDIO", "unbuffered"},
};

// INPUT ENVIRONMENT VARIABLES of salloc(1) that Drover reads.
const std::vector<EnvVar> kSallocEnv{
    {"SALLOC_ACCOUNT", "account"},         {"SALLOC_ACCTG_FREQ", "acctg-freq"},
    {"SALLOC_CLUSTERS", "clusters"},       {"SLURM_CLUSTERS", "clusters"},
    {"SALLOC_CONSTRAINT", "constraint"},   {"SALLOC_CPUS_PER_GPU", "cpus-per-gpu"},
    {"SALLOC_DEBUG", "verbose"},           {"SALLOC_EXCLUSIVE", "exclusive"},
    {"SALLOC_GPUS", "gpus"},               {"SALLOC_GPUS_PER_NODE", "gpus-per-node"},
    {"SALLOC_GPUS_PER_TASK", "gpus-per-task"}, {"SALLOC_GPU_BIND", "gpu-bind"},
    {"SALLOC_GRES", "gres"},
    {"SALLOC_GRES_FLAGS", "gres-flags"},   {"SALLOC_HINT", "hint"},
    {"SLURM_HINT", "hint"},                {"SALLOC_IMMEDIATE", "immediate"},
    {"SALLOC_MEM_PER_CPU", "mem-per-cpu"}, {"SALLOC_MEM_PER_GPU", "mem-per-gpu"},
    {"SALLOC_MEM_PER_NODE", "mem"},        {"SALLOC_NO_KILL", "no-kill"},
    {"SALLOC_OVERCOMMIT", "overcommit"},   {"SALLOC_PARTITION", "partition"},
    {"SALLOC_QOS", "qos"},                 {"SALLOC_RESERVATION", "reservation"},
    {"SALLOC_SIGNAL", "signal"},           {"SALLOC_TIMELIMIT", "time"},
    {"SALLOC_WCKEY", "wckey"},
};

std::span<const EnvVar> env_table(SubmitCommand c) {
  switch (c) {
    case SubmitCommand::kSbatch: return kSbatchEnv;
    case SubmitCommand::kSrun: return kSrunEnv;
    case SubmitCommand::kSalloc: return kSallocEnv;
  }
  return {};
}

const OptionSpec* spec_by_name(const std::vector<OptionSpec>& specs, std::string_view name) {
  for (const auto& s : specs)
    if (s.long_name == name) return &s;
  return nullptr;
}

// man sbatch: a flag is set by an empty value, "yes" or a non-zero number;
// *_DEBUG variables are 0 or 1.
bool env_flag_enabled(std::string_view value) {
  if (value.empty() || iequals(value, "yes")) return true;
  auto n = parse_int(value, true);
  return n && *n != 0;
}

// Options set by the input environment, in the table's order.
std::vector<std::pair<ScannedOption, OptionOrigin>> env_options(const SubmitInputs& in,
                                                                const std::vector<OptionSpec>& specs) {
  std::vector<std::pair<ScannedOption, OptionOrigin>> out;
  for (const auto& ev : env_table(in.command)) {
    auto it = in.env.find(std::string(ev.var));
    const OptionSpec* spec = spec_by_name(specs, ev.option);
    if (it == in.env.end() || !spec) continue;
    ScannedOption opt{spec->id, fmt::format("--{}", ev.option), std::nullopt};
    if (spec->arg == ArgKind::kNone) {
      if (!env_flag_enabled(it->second)) continue;
    } else if (spec->arg == ArgKind::kRequired || !it->second.empty()) {
      opt.value = it->second;
    }
    // sbatch leaves -m plane=N to the job's sruns as "plane" and the size apart.
    if (ev.option == "distribution" && opt.value && istarts_with(*opt.value, "plane") &&
        !istarts_with(*opt.value, "plane=")) {
      if (auto size = in.env.find("SLURM_DIST_PLANESIZE"); size != in.env.end()) {
        opt.value = "plane=" + size->second + opt.value->substr(5);
      }
    }
    out.push_back({std::move(opt), OptionOrigin{OptionOrigin::Layer::kEnvironment, std::string(ev.var)}});
  }
  return out;
}

std::string usage_text(SubmitCommand c) {
  const char* name = submit_command_name(c);
  if (c == SubmitCommand::kSbatch)
    return fmt::format("Usage: {} [OPTIONS(0)...] [ : [OPTIONS(N)...]] script(0) [args(0)...]\n", name);
  if (c == SubmitCommand::kSrun) return fmt::format("Usage: {} [OPTIONS(0)... [executable(0) [args(0)...]]]\n", name);
  return fmt::format("Usage: {} [OPTIONS(0)...] [ : [OPTIONS(N)...]] [command(0) [args(0)...]]\n", name);
}

std::string help_text(SubmitCommand c) {
  std::string text = usage_text(c);
  text += "\nOptions and their values follow Slurm's; see `man ";
  text += submit_command_name(c);
  text += "`. Drover accepts:\n";
  for (const auto& s : job_option_specs(c)) {
    std::string line = s.short_name ? fmt::format("  -{}, --{}", s.short_name, s.long_name)
                                    : fmt::format("      --{}", s.long_name);
    if (s.arg == ArgKind::kRequired) line += "=<value>";
    if (s.arg == ArgKind::kOptional) line += "[=<value>]";
    text += line + "\n";
  }
  return text;
}

// --help/--usage/--version on the command line print and exit, first one wins.
std::optional<std::string> print_action(const ScanResult& scan, SubmitCommand c) {
  for (const auto& o : scan.options) {
    std::string_view name = job_option_name(o.id);
    if (name == "version") return fmt::format("{}\n", kSlurmVersionLine);
    if (name == "help") return help_text(c);
    if (name == "usage") return usage_text(c);
    if (name == "mpi" && o.value && iequals(*o.value, "list"))
      return std::string("MPI plugin types are...\n\tnone\n\tpmix\n");
  }
  return std::nullopt;
}

// Slurm's heterogeneous jobs: components separated by ':' on the command
// line, or by '#SBATCH hetjob' (its older 'packjob') in a script. Drover
// schedules each job as one component and says so instead of running ':'.
bool is_het_separator(std::string_view word, bool in_script) {
  return in_script ? (iequals(word, "hetjob") || iequals(word, "packjob")) : word == ":";
}

CliError het_refusal(std::string_view program, std::string_view where) {
  return cli_error(program,
                   fmt::format("heterogeneous jobs ({}) are not supported by Drover; submit each component as a "
                               "job of its own (a dependency can order them)",
                               where));
}

// The batch script: --wrap, a named file, or standard input.
CliResult<bool> load_script(JobRequest& req, const ScanResult& scan, const SubmitInputs& in) {
  bool wrap = false;
  for (const auto& o : scan.options) wrap = wrap || job_option_name(o.id) == "wrap";
  if (wrap) {
    if (!scan.operands.empty()) return cli_error("sbatch", "Script arguments not permitted with --wrap option");
    return true;  // the script is built after all layers are merged
  }
  Result<std::string> text = make_error("no reader");
  if (!scan.operands.empty()) {
    if (is_het_separator(scan.operands.front(), false)) return het_refusal("sbatch", "':' between components");
    req.script_path = scan.operands.front();
    req.argv.assign(scan.operands.begin() + 1, scan.operands.end());
    text = in.read_file ? in.read_file(req.script_path) : make_error("no file reader");
    if (!text) return cli_error("sbatch", fmt::format("Unable to open file {}", req.script_path));
  } else {
    text = in.read_stdin ? in.read_stdin() : make_error("no stdin reader");
    if (!text) return cli_error("sbatch", "Batch script is empty!");
  }
  auto checked = check_batch_script(*text);
  if (!checked) return checked.error();
  req.script = std::move(*text);
  return true;
}

// Scans every #SBATCH directive; an operand in a directive is Slurm's
// "Invalid directive" error.
CliResult<std::vector<std::pair<ScannedOption, OptionOrigin>>> script_options(const JobRequest& req,
                                                                               const std::vector<OptionSpec>& specs) {
  std::vector<std::pair<ScannedOption, OptionOrigin>> out;
  std::string file = req.script_path.empty() ? "<stdin>" : req.script_path;
  for (const auto& d : extract_directives(req.script)) {
    auto scan = scan_args(d.words, specs, OperandMode::kPermute, "sbatch");
    if (!scan) return CliError{getopt_error_text(scan.error(), "sbatch"), kExitBadOption};
    if (!scan->operands.empty() && is_het_separator(scan->operands[0], true)) {
      return het_refusal("sbatch", fmt::format("'#SBATCH {}' at {}:{}", scan->operands[0], file, d.line));
    }
    if (!scan->operands.empty()) {
      CliError e = cli_error("sbatch", fmt::format("Invalid directive found in batch script: {}", scan->operands[0]),
                             kExitBadOption);
      e.text += fmt::format("sbatch: error: at {}:{}: quote a value that contains spaces, or put a '#' before a "
                            "comment\n", file, d.line);
      return e;
    }
    for (auto& o : scan->options) {
      std::string_view name = job_option_name(o.id);
      if (name == "wrap" || name == "help" || name == "usage" || name == "version") continue;  // as Slurm: ignored
      out.push_back({std::move(o), OptionOrigin{OptionOrigin::Layer::kScript, fmt::format("{}:{}", file, d.line)}});
    }
  }
  return out;
}

bool is_memory_option(std::string_view name) { return name == "mem" || name == "mem-per-cpu" || name == "mem-per-gpu"; }

// The memory options exclude each other (see job_options.hpp).
CliResult<bool> apply_memory_exclusion(JobRequest& req) {
  std::vector<std::string> from_user, from_env;
  for (const auto& [name, origin] : req.origins) {
    if (!is_memory_option(name)) continue;
    (origin.layer == OptionOrigin::Layer::kEnvironment ? from_env : from_user).push_back(name);
  }
  if (from_user.size() > 1) {
    std::string where;
    for (const auto& n : from_user) {
      const auto& o = req.origins[n];
      where += fmt::format(" --{} ({})", n, o.where.empty() ? "command line" : o.where);
    }
    return CliError{fmt::format("{0}: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.\n"
                                "{0}: error: given:{1}; keep one of them\n",
                                submit_command_name(req.command), where),
                    kExitError};
  }
  if (from_user.empty()) return true;
  for (const auto& n : from_env) {
    if (n == from_user.front()) continue;
    if (n == "mem") req.mem_per_node_mb.reset();
    if (n == "mem-per-cpu") req.mem_per_cpu_mb.reset();
    if (n == "mem-per-gpu") req.mem_per_gpu_mb.reset();
    req.origins.erase(n);
  }
  return true;
}

// Any GPU at all: -G, --gpus-per-*, or a gpu --gres.
bool asks_for_gpus(const JobRequest& req) {
  for (const auto* g : {&req.gpus, &req.gpus_per_node, &req.gpus_per_socket, &req.gpus_per_task}) {
    if (*g && (*g)->count > 0) return true;
  }
  return std::any_of(req.gres.begin(), req.gres.end(), [](const GresSpec& g) { return g.name == "gpu" && g.count > 0; });
}

// --hint as Slurm 22.05 records it (ReqB:S:C:T on the anchor): nomultithread and compute_bound use one
// thread per core, memory_bound one core per socket too; given -B or --threads-per-core win.
void apply_hint_layout(JobRequest& req) {
  if (!req.hint) return;
  const auto hints = split(*req.hint, ',');
  auto has = [&](const char* h) { return std::find(hints.begin(), hints.end(), h) != hints.end(); };
  if (has("nomultithread") || has("compute_bound") || has("memory_bound")) {
    if (!req.threads_per_core) req.threads_per_core = 1;
  }
  if (has("memory_bound") && !req.cores_per_socket) req.cores_per_socket = 1;
}

CliResult<bool> validate_merged(JobRequest& req) {
  const char* prog = submit_command_name(req.command);
  apply_hint_layout(req);
  if (req.quiet && req.verbose > 0) return cli_error(prog, "don't specify both --verbose (-v) and --quiet (-Q)");
  // Slurm 22.05's words and status (anchor cluster, sbatch, salloc and srun alike).
  if (req.gpus_per_socket && !req.sockets_per_node) {
    return CliError{fmt::format("{0}: error: --gpus-per-socket option requires --sockets-per-node specification\n"
                                "{0}: error: Invalid generic resource (gres) specification\n",
                                prog),
                    kExitError};
  }
  // --batch: features of the batch host, each one that -C names (Slurm
  // 22.05 on the anchor cluster: h100 with -C 'h100|a100' is taken, x without -C is not).
  if (auto b = req.uninterpreted.find("--batch"); b != req.uninterpreted.end()) {
    auto named = core::Constraint::parse(req.constraint.value_or(""));
    auto batch = core::Constraint::parse(b->second);
    const std::vector<std::string> within = named ? named->features() : std::vector<std::string>{};
    const std::vector<std::string> wanted = batch ? batch->features() : std::vector<std::string>{};
    const bool subset = batch && std::all_of(wanted.begin(), wanted.end(), [&](const std::string& f) {
      return std::find(within.begin(), within.end(), f) != within.end();
    });
    if (!subset) {
      return cli_error(prog, "Batch job submission failed: Job --batch option is invalid or not a subset of --constraints");
    }
  }
  // Slurm 22.05's words and status (anchor cluster: --deadline=now+1hour --begin=now+2hours).
  if (req.begin && req.deadline && *req.deadline < *req.begin) {
    return cli_error(prog, "Incompatible begin and deadline time specification");
  }
  auto mem = apply_memory_exclusion(req);
  if (!mem) return mem;
  if (req.mem_per_gpu_mb && !asks_for_gpus(req)) {
    CliError e = cli_error(prog, fmt::format("Requested mem_per_tres=gres:gpu:{} but did not request any GPU.",
                                             *req.mem_per_gpu_mb));
    e.text += fmt::format("{}: error: Invalid generic resource (gres) specification\n", prog);
    return e;
  }
  // Slurm 22.05 counts tasks from -N or --ntasks-per-node too (checked on the anchor: --gpus-per-task=1 -N 2
  // ran two tasks); with none of them the task count is unknown.
  if (req.gpus_per_task && !req.gpus && !req.ntasks && !req.ntasks_per_node && !req.nodes) {
    CliError e = cli_error(prog, "Failed to validate job spec. --gpus-per-task used without either --gpus or "
                                 "-n/--ntasks is not allowed.");
    e.text += fmt::format("{}: error: Invalid generic resource (gres) specification\n", prog);
    return e;
  }
  return true;
}

// -n fewer than -N's minimum: as Slurm's commands, one node per task, said.
// -B S[:C[:T]] without -n or --ntasks-per-node asks for a task per CPU it
// names on each node, as Slurm 22.05 did on the anchor cluster: sbatch and
// salloc -B 2:4:1 ran 8 tasks, -B 2 two, -B *:4:1 four; srun only when all
// three are given (srun -B 2:4 ran one task, -B 1:2:1 two).
void tasks_from_extra_node_info(JobRequest& req) {
  if (!req.extra_node_info || req.ntasks || req.ntasks_per_node) return;
  int64_t per_node = 1;
  int given = 0;
  for (const auto& f : {req.sockets_per_node, req.cores_per_socket, req.threads_per_core}) {
    if (f) {
      per_node *= *f;
      ++given;
    }
  }
  if (given == 0 || (req.command == SubmitCommand::kSrun && given < 3)) return;
  req.ntasks = per_node * (req.nodes ? std::max<int64_t>(1, req.nodes->min) : 1);
}

void fit_nodes_to_tasks(JobRequest& req, std::vector<std::string>& warnings) {
  if (!req.ntasks || !req.nodes || *req.ntasks <= 0 || *req.ntasks >= req.nodes->min) return;
  warnings.push_back(fmt::format("{}: Warning: can't run {} processes on {} nodes, setting nnodes to {}",
                                 submit_command_name(req.command), *req.ntasks, req.nodes->min, *req.ntasks));
  req.nodes->min = *req.ntasks;
  if (req.nodes->max > *req.ntasks) req.nodes->max = *req.ntasks;
}

// srun's -N with -n that --ntasks-per-node cannot spread evenly, -n being a
// multiple of -N's minimum: --ntasks-per-node is dropped, said, as Slurm
// 22.05's srun does (`-N1 -n2 --ntasks-per-node=1` runs two tasks on one
// node); other mismatches are left for the controller to refuse, as there.
void drop_unfit_tasks_per_node(JobRequest& req, std::vector<std::string>& warnings) {
  if (req.command != SubmitCommand::kSrun || !req.ntasks || !req.nodes || !req.ntasks_per_node) return;
  const int64_t n = *req.ntasks, nodes = req.nodes->min, per = *req.ntasks_per_node;
  if (n <= 0 || nodes <= 0 || per <= 0 || n % nodes != 0 || n / nodes <= per) return;
  warnings.push_back(fmt::format("srun: Warning: can't honor --ntasks-per-node set to {} which doesn't match the "
                                 "requested tasks {} with the number of requested nodes {}. Ignoring "
                                 "--ntasks-per-node.",
                                 per, n, nodes));
  req.ntasks_per_node.reset();
}

using Layer = std::vector<std::pair<ScannedOption, OptionOrigin>>;

CliResult<bool> apply_layers(JobRequest& req, const std::vector<Layer>& layers, UnixTime now) {
  for (const auto& layer : layers) {
    for (const auto& [opt, origin] : layer) {
      auto r = apply_job_option(req, opt, origin, now);
      if (!r) return r;
    }
  }
  return true;
}

void collect_warnings(const JobRequest& req, std::vector<std::string>& warnings) {
  std::vector<std::string> names;
  for (const auto& [name, value] : req.uninterpreted) names.push_back(name);
  // Parsed and checked, but nothing in Drover acts on them (yet): placement
  // hints and layout details the scheduler does not model, and files it
  // does not read. Said once each rather than silently dropped.
  const std::pair<bool, const char*> inert[] = {
      {req.contiguous, "--contiguous"},
      {req.delay_boot.has_value(), "--delay-boot"},
      {req.export_file.has_value(), "--export-file"},
      {req.external_launcher, "--external-launcher"},
      {req.gpus_per_socket.has_value(), "--gpus-per-socket"},
      {req.gres_flags.has_value(), "--gres-flags"},
      {req.overcommit, "--overcommit"},
      {req.use_min_nodes, "--use-min-nodes"},
  };
  for (const auto& [set, name] : inert) {
    if (set) names.push_back(name);
  }
  for (const auto& name : names) {
    warnings.push_back(fmt::format("{}: warning: {} is accepted for compatibility but has no effect in Drover",
                                   submit_command_name(req.command), name));
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> job_option_env_vars(SubmitCommand command) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& ev : env_table(command)) out.emplace_back(ev.var, ev.option);
  return out;
}

CliResult<ParsedSubmission> parse_submission(const SubmitInputs& in) {
  const char* prog = submit_command_name(in.command);
  auto specs = job_option_specs(in.command);
  auto scan = scan_args(in.args, specs, OperandMode::kStopAtFirst, prog);
  if (!scan) return CliError{getopt_error_text(scan.error(), prog), kExitBadOption};

  ParsedSubmission out;
  if (auto text = print_action(*scan, in.command)) {
    out.action = SubmitAction::kPrint;
    out.output = *text;
    return out;
  }
  JobRequest& req = out.request;
  req.command = in.command;
  std::vector<Layer> layers;
  if (in.command == SubmitCommand::kSbatch) {
    auto loaded = load_script(req, *scan, in);
    if (!loaded) return loaded.error();
    auto directives = script_options(req, specs);
    if (!directives) return directives.error();
    layers.push_back(std::move(*directives));
  } else {
    if (!scan->operands.empty() && is_het_separator(scan->operands.front(), false)) {
      return het_refusal(prog, "':' between components");
    }
    req.argv = scan->operands;
  }
  layers.push_back(env_options(in, specs));
  Layer command_line;
  for (const auto& o : scan->options) command_line.push_back({o, OptionOrigin{}});
  layers.push_back(std::move(command_line));

  auto applied = apply_layers(req, layers, in.now);
  if (!applied) return applied.error();
  if (req.wrap) req.script = wrap_script(*req.wrap);
  auto valid = validate_merged(req);
  if (!valid) return valid.error();
  if (!in.gres_types.empty()) {
    for (const auto& g : req.gres) {
      if (std::find(in.gres_types.begin(), in.gres_types.end(), g.name) == in.gres_types.end()) {
        CliError e = cli_error(prog, "Invalid generic resource (gres) specification");
        e.text += fmt::format("{}: error: drover: --gres={} names \"{}\", which slurm.conf's GresTypes ({}) does "
                              "not list\n",
                              prog, g.str(), g.name, join(in.gres_types, ","));
        return e;
      }
    }
  }
  tasks_from_extra_node_info(req);
  fit_nodes_to_tasks(req, out.warnings);
  drop_unfit_tasks_per_node(req, out.warnings);
  collect_warnings(req, out.warnings);
  return out;
}

std::string submission_reply(const JobRequest& req, int64_t job_id) {
  if (req.quiet) return "";
  const std::string cluster = req.clusters.value_or("");
  if (req.parsable) return cluster.empty() ? fmt::format("{}\n", job_id) : fmt::format("{};{}\n", job_id, cluster);
  if (!cluster.empty()) return fmt::format("Submitted batch job {} on cluster {}\n", job_id, cluster);
  return fmt::format("Submitted batch job {}\n", job_id);
}

std::string test_only_reply(const JobRequest& req, int64_t job_id, UnixTime start, int64_t cpus,
                            const std::string& nodes, const std::string& partition) {
  return fmt::format("{}: Job {} to start at {} using {} processors on nodes {} in partition {}\n",
                     submit_command_name(req.command), job_id, format_timestamp(start), cpus, nodes, partition);
}

std::string default_job_name(const JobRequest& r) {
  auto base = [](const std::string& path) {
    auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
  };
  if (r.job_name) return *r.job_name;
  if (r.command == SubmitCommand::kSbatch) {
    if (r.wrap) return "wrap";
    return r.script_path.empty() ? "sbatch" : base(r.script_path);
  }
  // As Slurm 22.05 names salloc's allocations, whatever command runs in them (anchor cluster).
  if (r.command == SubmitCommand::kSalloc) return r.no_shell ? "no-shell" : "interactive";
  if (!r.argv.empty()) return base(r.argv.front());
  return "srun";
}

}  // namespace drover::cli
