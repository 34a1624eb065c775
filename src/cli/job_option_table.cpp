// The table of sbatch/srun/salloc options: names, which command takes them,
// and how each value is checked and stored in a JobRequest. Error texts are
// Slurm 22.05's (first line) followed by Drover's line saying which value,
// where it came from and what is expected.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <string_view>
#include <utility>

#include "cli/job_options.hpp"
#include "common/rlimits.hpp"
#include "common/strings.hpp"
#include "common/task_layout.hpp"
#include "common/units.hpp"

namespace drover::cli {
namespace {

enum Cmd : unsigned { S = 1, R = 2, A = 4, SR = S | R, SA = S | A, RA = R | A, SRA = S | R | A };

unsigned command_bit(SubmitCommand c) {
  switch (c) {
    case SubmitCommand::kSbatch: return S;
    case SubmitCommand::kSrun: return R;
    case SubmitCommand::kSalloc: return A;
  }
  return 0;
}

struct Ctx {
  JobRequest& req;
  const ScannedOption& opt;
  const OptionOrigin& origin;
  UnixTime now;
  std::string spelling;  // "--ntasks" even when given as "-n": Slurm names the long form
  std::string_view program() const { return submit_command_name(req.command); }
  const std::string& value() const { return *opt.value; }
  bool has_value() const { return opt.value.has_value(); }
};

using Apply = std::function<CliResult<bool>(Ctx&)>;

struct OptionDef {
  std::string_view long_name;
  char short_name;
  ArgKind arg;
  unsigned commands;
  Apply apply;  // empty for --help/--usage/--version, handled by the caller
};

std::string origin_text(const OptionOrigin& o) {
  switch (o.layer) {
    case OptionOrigin::Layer::kScript: return fmt::format("in the #SBATCH directive at {}", o.where);
    case OptionOrigin::Layer::kEnvironment: return fmt::format("from the environment variable {}", o.where);
    case OptionOrigin::Layer::kCommandLine: break;
  }
  return "on the command line";
}

// Slurm's line, then Drover's: which value, where from, what is expected.
CliError bad_value(const Ctx& c, std::string_view slurm_line, int exit_code, std::string_view expected) {
  std::string text = fmt::format("{}: error: {}\n", c.program(), slurm_line);
  text += fmt::format("{}: error: {}={} {}: {}\n", c.program(), c.spelling, c.has_value() ? c.value() : "",
                      origin_text(c.origin), expected);
  return CliError{text, exit_code};
}

CliError invalid_spec(const Ctx& c, std::string_view expected) {
  return bad_value(c, fmt::format("Invalid {} specification", c.spelling), kExitBadOption, expected);
}

CliError invalid_numeric(const Ctx& c, std::string_view expected) {
  return bad_value(c, fmt::format("Invalid numeric value \"{}\" for {}.", c.value(), c.spelling), kExitError,
                   expected);
}

// "Batch job submission failed: ..." as each command words a refused submission.
CliError submission_failed(const Ctx& c, std::string_view reason, std::string_view expected) {
  std::string_view lead = c.req.command == SubmitCommand::kSbatch  ? "Batch job submission failed"
                          : c.req.command == SubmitCommand::kSrun ? "Unable to allocate resources"
                                                                  : "Job submit/allocate failed";
  return bad_value(c, fmt::format("{}: {}", lead, reason), kExitError, expected);
}

// ---- generic appliers -------------------------------------------------------

Apply set_str(std::optional<std::string> JobRequest::*m) {
  return [m](Ctx& c) -> CliResult<bool> {
    c.req.*m = c.value();
    return true;
  };
}

Apply set_flag(bool JobRequest::*m, bool v = true) {
  return [m, v](Ctx& c) -> CliResult<bool> {
    c.req.*m = v;
    return true;
  };
}

Apply set_count(std::optional<int64_t> JobRequest::*m, bool allow_zero = false) {
  return [m, allow_zero](Ctx& c) -> CliResult<bool> {
    auto n = parse_count(c.value(), allow_zero);
    if (!n) return invalid_numeric(c, allow_zero ? "a whole number >= 0" : "a whole number >= 1");
    c.req.*m = *n;
    return true;
  };
}

constexpr std::string_view kTimeForms =
    "use minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or UNLIMITED (e.g. 90, 1:30:00, 2-00:00:00)";

Apply set_time(std::optional<Seconds> JobRequest::*m) {
  return [m](Ctx& c) -> CliResult<bool> {
    auto t = parse_duration(c.value());
    if (!t || *t < 0) return invalid_spec(c, kTimeForms);
    c.req.*m = *t;
    return true;
  };
}

Apply set_mem(std::optional<int64_t> JobRequest::*m) {
  return [m](Ctx& c) -> CliResult<bool> {
    auto mb = parse_memory_mb(c.value());
    if (!mb || *mb < 0) return invalid_spec(c, "use a size in MB or with a K, M, G or T suffix (e.g. 4000, 64G)");
    c.req.*m = *mb;
    return true;
  };
}

Apply set_timestamp(std::optional<UnixTime> JobRequest::*m) {
  return [m](Ctx& c) -> CliResult<bool> {
    auto t = parse_timestamp(c.value(), c.now);
    if (!t) {
      CliError e = invalid_spec(c, "use now[+N{seconds|minutes|hours|days}], YYYY-MM-DD[THH:MM[:SS]], HH:MM[:SS], "
                                   "today, tomorrow, midnight or noon");
      e.text = fmt::format("Invalid time specification (pos=0): {}\n", c.value()) + e.text;
      return e;
    }
    c.req.*m = *t;
    return true;
  };
}

Apply set_gpu(std::optional<GpuCount> JobRequest::*m) {
  return [m](Ctx& c) -> CliResult<bool> {
    auto g = parse_gpu_count(c.value());
    if (!g) return bad_value(c, "Invalid generic resource (gres) specification", kExitError,
                             "use [type:]count, e.g. 2 or a100:2");
    c.req.*m = *g;
    return true;
  };
}

Apply set_bell(bool v) {
  return [v](Ctx& c) -> CliResult<bool> {
    c.req.bell = v;
    return true;
  };
}

Apply uninterpreted() {
  return [](Ctx& c) -> CliResult<bool> {
    c.req.uninterpreted[c.spelling] = c.has_value() ? c.value() : "";  // by long name
    return true;
  };
}

// ---- option-specific appliers ---------------------------------------------------

// -F/--nodefile FILE, and -w/--nodelist with a '/' in it (a file's name, as
// Slurm reads it): the node names in the file, on one line or many, separated
// by white space or commas, each once, as --nodelist.
CliResult<bool> apply_node_file(Ctx& c) {
  const std::string& path = c.value();
  std::ifstream in(path);
  if (!in) {  // Slurm 22.05's two lines, and its exit status
    return CliError{fmt::format("{0}: error: slurm_allocate_resources error opening file {1}, {2}\n"
                                "{0}: error: Invalid --nodefile node file\n",
                                c.program(), path, std::strerror(errno)),
                    kExitBadOption};
  }
  std::vector<std::string> names;
  std::string word;
  while (in >> word) {
    for (const auto& n : split(word, ',')) {
      if (!n.empty() && std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    }
  }
  if (names.empty()) {  // Slurm 22.05's two lines, and its exit status
    return CliError{fmt::format("{0}: error: Hostlist is empty!\n{0}: error: Invalid --nodefile node file\n",
                                c.program()),
                    kExitBadOption};
  }
  c.req.nodelist = join(names, ",");
  return true;
}

CliResult<bool> apply_nodelist(Ctx& c) {
  if (c.value().find('/') != std::string::npos) return apply_node_file(c);
  c.req.nodelist = c.value();
  return true;
}

CliResult<bool> apply_array(Ctx& c) {
  auto a = parse_array_spec(c.value());
  if (!a) return submission_failed(c, "Invalid job array specification",
                                   a.error().message + "; use e.g. 0-15, 1,3,5-7, 0-9:2, 0-15%4");
  c.req.array = *a;
  return true;
}

CliResult<bool> apply_dependency(Ctx& c) {
  // expand: (growing a job) is Slurm's but not built: Slurm 22.05 without it said this (anchor cluster).
  const std::string v = to_lower(c.value());
  if (v.rfind("expand:", 0) == 0 || v.find(",expand:") != std::string::npos || v.find("?expand:") != std::string::npos) {
    return submission_failed(c, "Requested operation not supported on this system",
                             "--dependency=expand: (adding resources to a running job) is not built in Drover");
  }
  auto d = parse_dependency(c.value());
  if (!d) return submission_failed(c, "Job dependency problem",
                                   d.error().message + "; use e.g. afterok:123:124,afterany:125 or singleton");
  c.req.dependency = *d;
  return true;
}

CliResult<bool> apply_signal(Ctx& c) {
  auto s = parse_signal_spec(c.value());
  if (!s) return invalid_spec(c, s.error().message + "; use [{R|B}:]<sig_num>[@<sig_time>], e.g. B:USR2@90");
  c.req.signal = *s;
  return true;
}

CliResult<bool> apply_kill_command(Ctx& c) {
  int sig = c.has_value() ? signal_number(c.value()) : 0;
  if (c.has_value() && sig == 0) return invalid_spec(c, "not a signal; use a name (TERM, SIGHUP, USR1) or a number");
  c.req.kill_command_signal = sig;
  return true;
}

CliResult<bool> apply_export(Ctx& c) {
  auto e = parse_export_spec(c.value());
  if (!e) return invalid_spec(c, e.error().message + "; use ALL, NONE, or [ALL,]VAR[=value],...");
  // NONE beside variables (--export=NONE,FOO=1), as Slurm 22.05 took it on the anchor: sbatch and salloc
  // export the variables (from the login environment, as any list without ALL), srun exports none of them.
  if (e->none && (!e->names.empty() || !e->assigned.empty())) {
    if (c.req.command == SubmitCommand::kSrun) {
      e->names.clear();
      e->assigned.clear();
    } else {
      e->none = false;
    }
  }
  c.req.export_env = *e;
  return true;
}

CliResult<bool> apply_mail_type(Ctx& c) {
  auto m = parse_mail_type(c.value());
  if (!m) return invalid_spec(c, m.error().message + "; use NONE, BEGIN, END, FAIL, REQUEUE, ALL, "
                                                     "INVALID_DEPEND, STAGE_OUT, TIME_LIMIT[_90|_80|_50], ARRAY_TASKS");
  c.req.mail_types = *m;
  return true;
}

CliResult<bool> apply_exclusive(Ctx& c) {
  auto s = parse_exclusive(c.opt.value ? std::optional<std::string_view>(c.value()) : std::nullopt);
  if (!s) return invalid_spec(c, "use --exclusive, --exclusive=user or --exclusive=mcs");
  c.req.sharing = *s;
  return true;
}

CliResult<bool> apply_nodes(Ctx& c) {
  auto r = parse_node_range(c.value());
  if (!r) return bad_value(c, r.error().message, kExitBadOption, "use a count or min-max, e.g. 4 or 2-8");
  // Slurm's controller refuses a job of no nodes (a range may start at 0).
  if (r->min == 0 && r->max == 0) {
    return submission_failed(c, "Node count specification invalid", "ask for at least one node");
  }
  c.req.nodes = *r;
  return true;
}

CliResult<bool> apply_gres(Ctx& c) {
  auto g = parse_gres_list(c.value());
  if (!g || g->empty()) return bad_value(c, "Invalid generic resource (gres) specification", kExitError,
                                         "use name[:type][:count],..., e.g. gpu:8 or gpu:h100:2");
  c.req.gres = *g;
  return true;
}

CliResult<bool> apply_open_mode(Ctx& c) {
  const std::string& v = c.value();
  if (istarts_with("append", v) && !v.empty()) c.req.open_mode = OpenMode::kAppend;
  else if (istarts_with("truncate", v) && !v.empty()) c.req.open_mode = OpenMode::kTruncate;
  else return invalid_spec(c, "use append or truncate");
  return true;
}

// --propagate[=LIST]: which of the submitting shell's soft limits the tasks get (common/rlimits.hpp).
CliResult<bool> apply_propagate(Ctx& c) {
  const std::string v = c.has_value() ? c.value() : "";
  auto bits = parse_rlimit_list(v);
  if (!bits) {
    return bad_value(c, bits.error().message, kExitError,
                     "use ALL, NONE or a comma list of AS, CORE, CPU, DATA, FSIZE, MEMLOCK, NOFILE, NPROC, RSS, STACK");
  }
  c.req.propagate = v;
  return true;
}

CliResult<bool> apply_requeue(Ctx& c, bool v) {
  c.req.requeue = v;
  return true;
}

CliResult<bool> apply_nice(Ctx& c) {
  constexpr int64_t kMaxNice = 2147483645;
  if (!c.has_value()) {
    c.req.nice = 100;
    return true;
  }
  auto n = parse_int(c.value(), true);
  if (!n) return invalid_numeric(c, "a whole number, e.g. 100 or -5");
  if (*n > kMaxNice || *n < -kMaxNice)
    return bad_value(c, "Invalid --nice value, out of range (+/- 2147483645)", kExitBadOption,
                     "use a number between -2147483645 and 2147483645");
  c.req.nice = *n;
  return true;
}

CliResult<bool> apply_priority(Ctx& c) {
  if (iequals(c.value(), "TOP")) {
    c.req.priority = kPriorityTop;
    return true;
  }
  auto n = parse_count(c.value(), true);
  if (!n) return invalid_numeric(c, "a whole number >= 0 or TOP");
  c.req.priority = *n;
  return true;
}

CliResult<bool> apply_kill_on_invalid_dep(Ctx& c) {
  if (iequals(c.value(), "yes")) c.req.kill_on_invalid_dep = true;
  else if (iequals(c.value(), "no")) c.req.kill_on_invalid_dep = false;
  else return invalid_spec(c, "use yes or no");
  return true;
}

CliResult<bool> apply_wait_all_nodes(Ctx& c) {
  if (c.value() == "0" || c.value() == "1") {
    c.req.wait_all_nodes = c.value() == "1";
    return true;
  }
  return invalid_spec(c, "use 0 or 1");
}

CliResult<bool> apply_no_kill(Ctx& c) {
  if (!c.has_value()) {
    c.req.no_kill = true;
  } else if (iequals(c.value(), "off")) {
    c.req.no_kill = false;
  } else {
    return invalid_spec(c, "use --no-kill or --no-kill=off");
  }
  return true;
}

CliResult<bool> apply_kill_on_bad_exit(Ctx& c) {
  if (!c.has_value()) {
    c.req.kill_on_bad_exit = true;
    return true;
  }
  auto n = parse_int(c.value(), true);
  if (!n) return invalid_numeric(c, "0 or 1");
  c.req.kill_on_bad_exit = *n != 0;
  return true;
}

CliResult<bool> apply_immediate(Ctx& c) {
  c.req.immediate = true;
  if (!c.has_value()) return true;
  auto n = parse_count(c.value(), true);
  if (!n) {
    return bad_value(c, fmt::format("Invalid numeric value \"{}\" for immediate.", c.value()), kExitError,
                     "give seconds attached to the option: -I30 or --immediate=30");
  }
  c.req.immediate_timeout = *n;
  return true;
}

CliResult<bool> apply_verbose(Ctx& c) {
  ++c.req.verbose;
  return true;
}

bool in_list(std::string_view word, std::initializer_list<std::string_view> list) {
  return std::any_of(list.begin(), list.end(), [&](std::string_view w) { return iequals(w, word); });
}

// --cpu-bind: comma list of q[uiet], v[erbose], no[ne], rank, rank_ldom,
// sockets, cores, threads, ldoms, boards, map_cpu:/mask_cpu:/map_ldom:/mask_ldom:<list>.
CliResult<bool> apply_cpu_bind(Ctx& c) {
  // A map_cpu:/mask_cpu: list is comma-separated too, and runs to the end (map_cpu:49,17,1,33); the
  // singular words (core, socket, ...) are Slurm's too (`--cpu_bind=verbose,core` in public scripts).
  std::vector<std::string> items;
  for (const auto& item : split(c.value(), ',')) {
    if (!items.empty() && items.back().find(':') != std::string::npos && item.find(':') == std::string::npos &&
        !item.empty() && std::isxdigit(static_cast<unsigned char>(item[0]))) {
      items.back() += "," + item;
    } else {
      items.push_back(item);
    }
  }
  for (const auto& item : items) {
    std::string_view kind = std::string_view(item).substr(0, item.find(':'));
    bool with_list = item.find(':') != std::string::npos;
    bool ok = with_list ? in_list(kind, {"map_cpu", "mask_cpu", "map_ldom", "mask_ldom"}) && item.size() > kind.size() + 1
                        : in_list(kind, {"q", "quiet", "v", "verbose", "no", "none", "rank", "rank_ldom", "sockets",
                                         "socket", "cores", "core", "threads", "thread", "ldoms", "ldom", "boards",
                                         "board"});
    if (!ok) {
      CliError e = bad_value(c, fmt::format("unrecognized --cpu-bind argument \"{}\"", item), kExitError,
                             "use none, quiet, verbose, rank, cores, sockets, threads, ldoms, boards, "
                             "map_cpu:<list> or mask_cpu:<list>");
      e.text += fmt::format("{}: fatal: Failed to parse --cpu-bind= values.\n", c.program());
      return e;
    }
  }
  c.req.cpu_bind = c.value();
  return true;
}

// --gpu-bind: [verbose,]closest|none|per_task:N|single:N|map_gpu:LIST|mask_gpu:LIST (common/task_layout.hpp).
CliResult<bool> apply_gpu_bind(Ctx& c) {
  auto b = parse_gpu_bind(c.value());
  if (!b) {
    auto lines = split(b.error().message, '\n');
    CliError e = bad_value(c, lines.back(), kExitBadOption,
                           "use closest, none, per_task:N, single:N, map_gpu:LIST or mask_gpu:LIST, optionally "
                           "after verbose,");
    lines.pop_back();
    std::string before;
    for (const auto& l : lines) before += fmt::format("{}: error: {}\n", c.program(), l);
    e.text = before + e.text;
    return e;
  }
  c.req.gpu_bind = c.value();
  return true;
}

CliResult<bool> apply_mpi(Ctx& c) {
  if (!in_list(c.value(), {"none", "pmix", "pmix_v3", "pmix_v4", "pmi2", "list"})) {
    return bad_value(c, fmt::format("Invalid MPI type '{}', --mpi=list for acceptable types", c.value()),
                     kExitError, "Drover supports --mpi=none and --mpi=pmix");
  }
  c.req.mpi = c.value();
  return true;
}

CliResult<bool> apply_hint(Ctx& c) {
  // A comma list (`--hint=nomultithread,memory_bound`, as Slurm's takes it).
  for (const auto& one : split(c.value(), ',')) {
    if (!in_list(one, {"compute_bound", "memory_bound", "multithread", "nomultithread"})) {
      return bad_value(c, fmt::format("unrecognized --hint argument \"{}\", see --hint=help", c.value()), kExitError,
                       "use compute_bound, memory_bound, multithread or nomultithread");
    }
  }
  c.req.hint = c.value();
  return true;
}

// -m/--distribution: <node>[:<socket>[:<core>]][,Pack|NoPack]; node is
// *, block, cyclic, arbitrary or plane=<size>.
CliResult<bool> apply_distribution(Ctx& c) {
  std::string v = c.value();
  if (auto comma = v.find(','); comma != std::string::npos) {
    if (!in_list(std::string_view(v).substr(comma + 1), {"Pack", "NoPack"}))
      return invalid_spec(c, "the suffix after ',' must be Pack or NoPack");
    v.resize(comma);
  }
  auto levels = split(v, ':');
  // plane=<size> stands alone.
  if (!levels.empty() && (iequals(levels[0], "plane") || istarts_with(levels[0], "plane="))) {
    std::optional<int64_t> n;
    if (auto r = parse_count(std::string_view(levels[0]).substr(std::min<std::size_t>(6, levels[0].size())))) n = *r;
    if (levels.size() > 1 || !n || *n <= 0) {
      CliError e = invalid_spec(c, "plane=<size> takes a size above 0 and no socket or core level");
      e.text = fmt::format("{}: error: Invalid plane size or size not specified\n", c.program()) + e.text;
      return e;
    }
    c.req.distribution = c.value();
    return true;
  }
  bool ok = levels.size() <= 3 && !levels.empty();
  for (std::size_t i = 0; ok && i < levels.size(); ++i) {
    const std::string& l = levels[i];
    ok = in_list(l, {"*", "block", "cyclic"}) || (i == 0 && iequals(l, "arbitrary")) ||
         (i > 0 && iequals(l, "fcyclic"));
  }
  if (!ok) return invalid_spec(c, "use block, cyclic, arbitrary or plane=<size>, optionally :block|cyclic|fcyclic "
                                  "for sockets and cores, e.g. block:cyclic");
  c.req.distribution = c.value();
  return true;
}

// -B/--extra-node-info: S[:C[:T]], each a count or '*'.
CliResult<bool> apply_extra_node_info(Ctx& c) {
  auto parts = split(c.value(), ':');
  std::optional<int64_t> JobRequest::*fields[] = {&JobRequest::sockets_per_node, &JobRequest::cores_per_socket,
                                                   &JobRequest::threads_per_core};
  if (parts.empty() || parts.size() > 3) return invalid_spec(c, "use sockets[:cores[:threads]], e.g. 2:32:1");
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] == "*") continue;
    auto n = parse_count(parts[i]);
    if (!n) return invalid_spec(c, "use sockets[:cores[:threads]], each a count or *");
    c.req.*fields[i] = *n;
  }
  c.req.extra_node_info = true;
  return true;
}

CliResult<bool> apply_wrap(Ctx& c) {
  c.req.wrap = c.value();
  return true;
}

CliResult<bool> apply_get_user_env(Ctx& c) {
  c.req.get_user_env = c.has_value() ? c.value() : "";
  return true;
}

// --x11: Drover forwards no X11 connections; a job that needs a display must
// not start without one.
CliResult<bool> apply_x11(Ctx& c) {
  return CliError{fmt::format("{}: error: --x11: X11 forwarding is not built in Drover\n", c.program()), kExitError};
}

CliResult<bool> apply_jobid(Ctx& c) {
  auto n = parse_count(c.value());
  if (!n) return invalid_numeric(c, "the numeric id of a job that holds an allocation");
  c.req.jobid = *n;
  return true;
}

// The table. Order matters only for getopt's list of ambiguous candidates.
const std::vector<OptionDef>& option_table() {
  using J = JobRequest;
  static const std::vector<OptionDef> table = {
      {"accel-bind", 0, ArgKind::kRequired, R, uninterpreted()},
      {"account", 'A', ArgKind::kRequired, SRA, set_str(&J::account)},
      {"acctg-freq", 0, ArgKind::kRequired, SRA, uninterpreted()},
      {"array", 'a', ArgKind::kRequired, S, apply_array},
      {"batch", 0, ArgKind::kRequired, S, uninterpreted()},
      {"bb", 0, ArgKind::kRequired, SRA, uninterpreted()},
      {"bbf", 0, ArgKind::kRequired, S, uninterpreted()},
      {"bcast", 0, ArgKind::kOptional, R, uninterpreted()},
      {"begin", 'b', ArgKind::kRequired, SRA, set_timestamp(&J::begin)},
      {"bell", 0, ArgKind::kNone, A, set_bell(true)},
      {"chdir", 'D', ArgKind::kRequired, SRA, set_str(&J::chdir)},
      {"cluster-constraint", 0, ArgKind::kRequired, SRA, uninterpreted()},
      {"cluster", 0, ArgKind::kRequired, SRA, set_str(&J::clusters)},
      {"clusters", 'M', ArgKind::kRequired, SRA, set_str(&J::clusters)},
      {"comment", 0, ArgKind::kRequired, SRA, set_str(&J::comment)},
      {"compress", 0, ArgKind::kOptional, R, uninterpreted()},
      {"constraint", 'C', ArgKind::kRequired, SRA, set_str(&J::constraint)},
      {"container", 0, ArgKind::kRequired, SRA, uninterpreted()},
      {"contiguous", 0, ArgKind::kNone, SRA, set_flag(&J::contiguous)},
      {"core-spec", 'S', ArgKind::kRequired, SRA, uninterpreted()},
      {"cores-per-socket", 0, ArgKind::kRequired, SRA, set_count(&J::cores_per_socket)},
      {"cpu-bind", 0, ArgKind::kRequired, R, apply_cpu_bind},
      {"cpu_bind", 0, ArgKind::kRequired, R, apply_cpu_bind},
      {"cpu-freq", 0, ArgKind::kRequired, SRA, uninterpreted()},
      {"cpus-per-gpu", 0, ArgKind::kRequired, SRA, set_count(&J::cpus_per_gpu)},
      {"cpus-per-task", 'c', ArgKind::kRequired, SRA, set_count(&J::cpus_per_task)},
      {"deadline", 0, ArgKind::kRequired, SRA, set_timestamp(&J::deadline)},
      {"delay-boot", 0, ArgKind::kRequired, SRA, set_time(&J::delay_boot)},
      {"dependency", 'd', ArgKind::kRequired, SRA, apply_dependency},
      {"disable-status", 'X', ArgKind::kNone, R, set_flag(&J::disable_status)},
      {"distribution", 'm', ArgKind::kRequired, SRA, apply_distribution},
      {"epilog", 0, ArgKind::kRequired, R, set_str(&J::srun_epilog)},
      {"error", 'e', ArgKind::kRequired, SR, set_str(&J::stderr_path)},
      {"exact", 0, ArgKind::kNone, R, set_flag(&J::exact)},
      {"exclude", 'x', ArgKind::kRequired, SRA, set_str(&J::exclude)},
      {"exclusive", 0, ArgKind::kOptional, SRA, apply_exclusive},
      {"export", 0, ArgKind::kRequired, SR, apply_export},
      {"export-file", 0, ArgKind::kRequired, S, set_str(&J::export_file)},
      {"external-launcher", 0, ArgKind::kNone, R, set_flag(&J::external_launcher)},
      {"extra-node-info", 'B', ArgKind::kRequired, SRA, apply_extra_node_info},
      {"get-user-env", 0, ArgKind::kOptional, SA, apply_get_user_env},
      {"gid", 0, ArgKind::kRequired, SRA, set_str(&J::run_as_gid)},
      {"gpu-bind", 0, ArgKind::kRequired, SRA, apply_gpu_bind},
      {"gpu-freq", 0, ArgKind::kRequired, SRA, uninterpreted()},
      {"gpus", 'G', ArgKind::kRequired, SRA, set_gpu(&J::gpus)},
      {"gpus-per-node", 0, ArgKind::kRequired, SRA, set_gpu(&J::gpus_per_node)},
      {"gpus-per-socket", 0, ArgKind::kRequired, SRA, set_gpu(&J::gpus_per_socket)},
      {"gpus-per-task", 0, ArgKind::kRequired, SRA, set_gpu(&J::gpus_per_task)},
      {"gres", 0, ArgKind::kRequired, SRA, apply_gres},
      {"gres-flags", 0, ArgKind::kRequired, SRA, set_str(&J::gres_flags)},
      {"help", 'h', ArgKind::kNone, SRA, nullptr},
      {"het-group", 0, ArgKind::kRequired, R, uninterpreted()},
      {"pack-group", 0, ArgKind::kRequired, R, uninterpreted()},  // --het-group's older name, which 22.05 takes
      {"hint", 0, ArgKind::kRequired, SRA, apply_hint},
      {"hold", 'H', ArgKind::kNone, SRA, set_flag(&J::hold)},
      {"ignore-pbs", 0, ArgKind::kNone, S, set_flag(&J::ignore_pbs)},
      {"immediate", 'I', ArgKind::kOptional, RA, apply_immediate},
      {"input", 'i', ArgKind::kRequired, SR, set_str(&J::stdin_path)},
      {"jobid", 0, ArgKind::kRequired, R, apply_jobid},
      {"job-name", 'J', ArgKind::kRequired, SRA, set_str(&J::job_name)},
      {"kill-command", 'K', ArgKind::kOptional, A, apply_kill_command},
      {"kill-on-bad-exit", 'K', ArgKind::kOptional, R, apply_kill_on_bad_exit},
      {"kill-on-invalid-dep", 0, ArgKind::kRequired, S, apply_kill_on_invalid_dep},
      {"label", 'l', ArgKind::kNone, R, set_flag(&J::label)},
      {"licenses", 'L', ArgKind::kRequired, SRA, set_str(&J::licenses)},
      {"mail-type", 0, ArgKind::kRequired, SRA, apply_mail_type},
      {"mail-user", 0, ArgKind::kRequired, SRA, set_str(&J::mail_user)},
      {"mcs-label", 0, ArgKind::kRequired, SRA, uninterpreted()},
      {"mem", 0, ArgKind::kRequired, SRA, set_mem(&J::mem_per_node_mb)},
      {"mem-bind", 0, ArgKind::kRequired, SRA, uninterpreted()},
      {"mem-per-cpu", 0, ArgKind::kRequired, SRA, set_mem(&J::mem_per_cpu_mb)},
      {"mem-per-gpu", 0, ArgKind::kRequired, SRA, set_mem(&J::mem_per_gpu_mb)},
      {"mincpus", 0, ArgKind::kRequired, SRA, set_count(&J::min_cpus_per_node)},
      {"mpi", 0, ArgKind::kRequired, R, apply_mpi},
      {"msg-timeout", 0, ArgKind::kRequired, R, uninterpreted()},
      {"multi-prog", 0, ArgKind::kNone, R, set_flag(&J::multi_prog)},
      {"network", 0, ArgKind::kRequired, SRA, uninterpreted()},
      {"nice", 0, ArgKind::kOptional, SRA, apply_nice},
      {"no-allocate", 'Z', ArgKind::kNone, R, uninterpreted()},
      {"no-bell", 0, ArgKind::kNone, A, set_bell(false)},
      {"no-kill", 'k', ArgKind::kOptional, SRA, apply_no_kill},
      {"no-requeue", 0, ArgKind::kNone, S, [](Ctx& c) { return apply_requeue(c, false); }},
      {"no-shell", 0, ArgKind::kNone, A, set_flag(&J::no_shell)},
      {"nodefile", 'F', ArgKind::kRequired, SRA, apply_node_file},
      {"nodelist", 'w', ArgKind::kRequired, SRA, apply_nodelist},
      {"nodes", 'N', ArgKind::kRequired, SRA, apply_nodes},
      {"ntasks", 'n', ArgKind::kRequired, SRA, set_count(&J::ntasks)},
      {"ntasks-per-core", 0, ArgKind::kRequired, SRA, set_count(&J::ntasks_per_core)},
      {"ntasks-per-gpu", 0, ArgKind::kRequired, SRA, set_count(&J::ntasks_per_gpu)},
      {"ntasks-per-node", 0, ArgKind::kRequired, SRA, set_count(&J::ntasks_per_node)},
      {"tasks-per-node", 0, ArgKind::kRequired, SRA, set_count(&J::ntasks_per_node)},
      {"ntasks-per-socket", 0, ArgKind::kRequired, SRA, set_count(&J::ntasks_per_socket)},
      {"open-mode", 0, ArgKind::kRequired, SR, apply_open_mode},
      {"output", 'o', ArgKind::kRequired, SR, set_str(&J::stdout_path)},
      {"overcommit", 'O', ArgKind::kNone, SRA, set_flag(&J::overcommit)},
      {"overlap", 0, ArgKind::kNone, R, set_flag(&J::overlap)},
      {"oversubscribe", 's', ArgKind::kNone, SRA,
       [](Ctx& c) -> CliResult<bool> {
         c.req.sharing = Sharing::kOversubscribe;
         return true;
       }},
      {"parsable", 0, ArgKind::kNone, S, set_flag(&J::parsable)},
      {"partition", 'p', ArgKind::kRequired, SRA, set_str(&J::partition)},
      {"power", 0, ArgKind::kRequired, SRA, uninterpreted()},
      {"prefer", 0, ArgKind::kRequired, SRA, set_str(&J::prefer)},
      {"preserve-env", 'E', ArgKind::kNone, R, uninterpreted()},
      {"priority", 0, ArgKind::kRequired, SRA, apply_priority},
      {"profile", 0, ArgKind::kRequired, SRA, uninterpreted()},
      {"prolog", 0, ArgKind::kRequired, R, set_str(&J::srun_prolog)},
      {"propagate", 0, ArgKind::kOptional, SR, apply_propagate},
      {"pty", 0, ArgKind::kNone, R, set_flag(&J::pty)},
      {"qos", 'q', ArgKind::kRequired, SRA, set_str(&J::qos)},
      {"quiet", 'Q', ArgKind::kNone, SRA, set_flag(&J::quiet)},
      {"quit-on-interrupt", 0, ArgKind::kNone, R, set_flag(&J::quit_on_interrupt)},
      {"reboot", 0, ArgKind::kNone, SRA, uninterpreted()},
      {"relative", 'r', ArgKind::kRequired, R, uninterpreted()},
      {"requeue", 0, ArgKind::kNone, S, [](Ctx& c) { return apply_requeue(c, true); }},
      {"reservation", 0, ArgKind::kRequired, SRA, set_str(&J::reservation)},
      {"resv-ports", 0, ArgKind::kOptional, R, uninterpreted()},
      {"send-libs", 0, ArgKind::kOptional, R, uninterpreted()},
      {"signal", 0, ArgKind::kRequired, SRA, apply_signal},
      {"slurmd-debug", 0, ArgKind::kRequired, R, uninterpreted()},
      {"sockets-per-node", 0, ArgKind::kRequired, SRA, set_count(&J::sockets_per_node)},
      {"spread-job", 0, ArgKind::kNone, SRA, set_flag(&J::spread_job)},
      {"switches", 0, ArgKind::kRequired, SRA, uninterpreted()},
      {"task-epilog", 0, ArgKind::kRequired, R, set_str(&J::task_epilog)},
      {"task-prolog", 0, ArgKind::kRequired, R, set_str(&J::task_prolog)},
      {"test-only", 0, ArgKind::kNone, SR, set_flag(&J::test_only)},
      {"thread-spec", 0, ArgKind::kRequired, SRA, uninterpreted()},
      {"threads", 'T', ArgKind::kRequired, R, uninterpreted()},
      {"threads-per-core", 0, ArgKind::kRequired, SRA, set_count(&J::threads_per_core)},
      {"time", 't', ArgKind::kRequired, SRA, set_time(&J::time_limit)},
      {"time-min", 0, ArgKind::kRequired, SRA, set_time(&J::time_min)},
      {"tmp", 0, ArgKind::kRequired, SRA, set_mem(&J::tmp_disk_mb)},
      {"uid", 0, ArgKind::kRequired, SRA, set_str(&J::run_as_uid)},
      {"unbuffered", 'u', ArgKind::kNone, R, set_flag(&J::unbuffered)},
      {"usage", 0, ArgKind::kNone, SRA, nullptr},
      {"use-min-nodes", 0, ArgKind::kNone, SRA, set_flag(&J::use_min_nodes)},
      {"verbose", 'v', ArgKind::kNone, SRA, apply_verbose},
      {"version", 'V', ArgKind::kNone, SRA, nullptr},
      {"wait", 'W', ArgKind::kNone, S, set_flag(&J::wait)},
      {"wait", 'W', ArgKind::kRequired, R, set_count(&J::task_wait_s, true)},
      {"wait-all-nodes", 0, ArgKind::kRequired, SA, apply_wait_all_nodes},
      {"wckey", 0, ArgKind::kRequired, SRA, set_str(&J::wckey)},
      {"wrap", 0, ArgKind::kRequired, S, apply_wrap},
      {"x11", 0, ArgKind::kOptional, RA, apply_x11},
  };
  return table;
}

// Ids of aliases that share one meaning (--cpu_bind is --cpu-bind). Slurm 22.05's commands take
// --tasks-per-node and --cluster too, though their manuals name only the other spelling.
int canonical_id(int id) {
  static constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
      {"cpu_bind", "cpu-bind"}, {"tasks-per-node", "ntasks-per-node"}, {"cluster", "clusters"}};
  const auto& t = option_table();
  for (const auto& [alias, name] : kAliases) {
    if (t[static_cast<std::size_t>(id)].long_name != alias) continue;
    for (std::size_t i = 0; i < t.size(); ++i)
      if (t[i].long_name == name) return static_cast<int>(i);
  }
  return id;
}

}  // namespace

const char* submit_command_name(SubmitCommand c) {
  switch (c) {
    case SubmitCommand::kSbatch: return "sbatch";
    case SubmitCommand::kSrun: return "srun";
    case SubmitCommand::kSalloc: return "salloc";
  }
  return "?";
}

std::vector<OptionSpec> job_option_specs(SubmitCommand command) {
  std::vector<OptionSpec> specs;
  const auto& t = option_table();
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!(t[i].commands & command_bit(command))) continue;
    specs.push_back({canonical_id(static_cast<int>(i)), t[i].long_name, t[i].short_name, t[i].arg});
  }
  return specs;
}

std::string_view job_option_name(int id) { return option_table().at(static_cast<std::size_t>(id)).long_name; }

CliResult<bool> apply_job_option(JobRequest& req, const ScannedOption& opt, const OptionOrigin& origin,
                                 UnixTime now) {
  const OptionDef& def = option_table().at(static_cast<std::size_t>(opt.id));
  if (!def.apply) return true;  // --help/--usage/--version: the caller acts on them
  Ctx c{req, opt, origin, now, fmt::format("--{}", def.long_name)};
  auto r = def.apply(c);
  if (r) req.origins[std::string(def.long_name)] = origin;
  return r;
}

}  // namespace drover::cli
