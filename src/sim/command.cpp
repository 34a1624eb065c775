#include "sim/command.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "common/strings.hpp"
#include "config/core_cluster.hpp"
#include "config/model.hpp"
#include "sim/driver.hpp"
#include "sim/gen.hpp"
#include "sim/report.hpp"
#include "sim/trace.hpp"
#include "sim/trace_fields.hpp"

namespace drover::sim {
namespace {

constexpr const char* kUsage =
    "usage: drover sim run --config slurm.conf --trace FILE [--out DIR] [trace options]\n"
    "       drover sim compare --config A.conf --config B.conf --trace FILE [--out DIR] [trace options]\n"
    "       drover sim gen [--config slurm.conf] [--jobs N] [--seed S] [--rate PER_HOUR] [--mix ...] [--out FILE]\n"
    "\n"
    "trace options:\n"
    "  --format swf|csv|jsonl|sacct   the trace's format (default: from its name and first line)\n"
    "  --jobs FIRST:COUNT             replay COUNT jobs from position FIRST (0-based)\n"
    "  --missing-limit runtime|partition  a job without a time limit gets its run time (default) or the partition's\n"
    "  --limit-scale F                every time limit times F\n"
    "  --limit-shift SECONDS          then plus SECONDS (may be negative)\n"
    "  --run-to-limit                 every job runs exactly its time limit\n"
    "  --swf-whole-nodes CPUS         SWF processors become ceil(P/CPUS) whole nodes (default: P one-CPU tasks)\n"
    "  --swf-partition N=NAME         SWF partition number N is partition NAME (repeatable)\n"
    "  --swf-queue N=QOS              SWF queue number N is QOS QOS (repeatable)\n"
    "  --swf-no-memory                ignore SWF requested memory\n"
    "  --swf-no-feedback              ignore SWF preceding job and think time\n"
    "run options:\n"
    "  --fairshare-interval SECONDS   recompute fair share this often (default 300)\n"
    "  --json                         print summary.json instead of the table\n"
    "gen options: --jobs N --seed S --rate PER_HOUR --mix training=W,preprocess=W,inference=W,highmem=W\n"
    "  --train-nodes N:W,... --array-size MIN-MAX --users N --accounts N --runtime-scale F\n"
    "  --format csv|jsonl --out FILE (default: standard output)\n";

struct Options {
  std::vector<std::string> configs;
  std::string trace;
  std::string out;
  TraceOptions topts;
  SimOptions sopts;
  bool json = false;
  GenOptions gen;
  std::string gen_format = "csv";
  bool jobs_given = false;
};

using Handler = std::function<Status(Options&, const std::string&)>;
struct Flag {
  const char* name;
  bool takes_value;
  Handler apply;
};

Result<int64_t> int_value(const std::string& flag, const std::string& v, int64_t min) {
  auto n = parse_int(v, true);
  if (!n || *n < min) return make_error(fmt::format("{} {}: expected a whole number >= {}", flag, v, min));
  return *n;
}

Result<double> double_value(const std::string& flag, const std::string& v) {
  auto d = parse_double(v);
  if (!d || *d <= 0) return make_error(fmt::format("{} {}: expected a number above 0", flag, v));
  return *d;
}

// A flag whose value is a whole number >= min (or a number above 0), handed to `set`.
template <class Set>
Handler int_flag(const char* name, int64_t min, Set set) {
  return [=](Options& o, const std::string& v) -> Status {
    auto n = int_value(name, v, min);
    if (!n) return n.error();
    set(o, *n);
    return {};
  };
}

template <class Set>
Handler number_flag(const char* name, Set set) {
  return [=](Options& o, const std::string& v) -> Status {
    auto d = double_value(name, v);
    if (!d) return d.error();
    set(o, *d);
    return {};
  };
}

Status pair_list(std::vector<std::pair<int64_t, std::string>>& out, const std::string& flag, const std::string& v) {
  auto eq = v.find('=');
  auto n = parse_int(v.substr(0, eq));
  if (eq == std::string::npos || !n || eq + 1 == v.size()) return make_error(fmt::format("{} {}: expected N=NAME", flag, v));
  out.emplace_back(*n, v.substr(eq + 1));
  return {};
}

Status jobs_slice(Options& o, const std::string& v) {
  o.jobs_given = true;
  auto colon = v.find(':');
  if (colon == std::string::npos) {  // gen: a count
    auto n = int_value("--jobs", v, 1);
    if (!n) return n.error();
    o.gen.jobs = *n;
    o.topts.count = *n;
    return {};
  }
  auto first = parse_int(v.substr(0, colon));
  auto count = parse_int(v.substr(colon + 1));
  if (!first || !count || *count < 1) return make_error(fmt::format("--jobs {}: expected FIRST:COUNT (COUNT >= 1)", v));
  o.topts.first = *first;
  o.topts.count = *count;
  return {};
}

Status limit_shift(Options& o, const std::string& v) {
  bool negative = !v.empty() && v[0] == '-';
  auto s = parse_seconds(negative ? v.substr(1) : v);
  if (!s || *s == kInfinite) return make_error(fmt::format("--limit-shift {}: expected seconds or a duration", v));
  o.topts.limit_shift = negative ? -*s : *s;
  return {};
}

Status array_size(Options& o, const std::string& v) {
  auto parts = split(v, '-');
  auto lo = parse_int(parts[0]);
  auto hi = parts.size() == 2 ? parse_int(parts[1]) : lo;
  if (parts.size() > 2 || !lo || !hi || *lo < 1 || *hi < *lo || *hi > 100000) {
    return make_error(fmt::format("--array-size {}: expected MIN-MAX (1 <= MIN <= MAX)", v));
  }
  o.gen.array_min = static_cast<int32_t>(*lo);
  o.gen.array_max = static_cast<int32_t>(*hi);
  return {};
}

const std::vector<Flag>& flags() {
  static const std::vector<Flag> kFlags = {
      {"--config", true, [](Options& o, const std::string& v) { o.configs.push_back(v); return Status{}; }},
      {"--trace", true, [](Options& o, const std::string& v) { o.trace = v; return Status{}; }},
      {"--out", true, [](Options& o, const std::string& v) { o.out = v; return Status{}; }},
      {"--format", true, [](Options& o, const std::string& v) { o.topts.format = v; o.gen_format = v; return Status{}; }},
      {"--jobs", true, jobs_slice},
      {"--missing-limit", true, [](Options& o, const std::string& v) {
         if (v != "runtime" && v != "partition") return Status(make_error("--missing-limit: expected runtime or partition"));
         o.topts.missing_limit = v == "runtime" ? MissingLimit::kRunTime : MissingLimit::kPartitionDefault;
         return Status{};
       }},
      {"--limit-scale", true, number_flag("--limit-scale", [](Options& o, double d) { o.topts.limit_scale = d; })},
      {"--limit-shift", true, limit_shift},
      {"--run-to-limit", false, [](Options& o, const std::string&) { o.topts.run_to_limit = true; return Status{}; }},
      {"--swf-whole-nodes", true, int_flag("--swf-whole-nodes", 1, [](Options& o, int64_t n) {
         o.topts.swf.procs = SwfProcs::kWholeNodes;
         o.topts.swf.cpus_per_node = static_cast<int32_t>(n);
       })},
      {"--swf-partition", true,
       [](Options& o, const std::string& v) { return pair_list(o.topts.swf.partitions, "--swf-partition", v); }},
      {"--swf-queue", true,
       [](Options& o, const std::string& v) { return pair_list(o.topts.swf.queues, "--swf-queue", v); }},
      {"--swf-no-memory", false, [](Options& o, const std::string&) { o.topts.swf.use_memory = false; return Status{}; }},
      {"--swf-no-feedback", false, [](Options& o, const std::string&) { o.topts.swf.feedback = false; return Status{}; }},
      {"--fairshare-interval", true,
       int_flag("--fairshare-interval", 1, [](Options& o, int64_t n) { o.sopts.fairshare_interval = n; })},
      {"--json", false, [](Options& o, const std::string&) { o.json = true; return Status{}; }},
      {"--seed", true, int_flag("--seed", 0, [](Options& o, int64_t n) { o.gen.seed = static_cast<uint64_t>(n); })},
      {"--rate", true, number_flag("--rate", [](Options& o, double d) { o.gen.rate_per_hour = d; })},
      {"--mix", true, [](Options& o, const std::string& v) { return parse_mix(v, o.gen); }},
      {"--train-nodes", true, [](Options& o, const std::string& v) { return parse_train_nodes(v, o.gen); }},
      {"--array-size", true, array_size},
      {"--users", true, int_flag("--users", 1, [](Options& o, int64_t n) { o.gen.users = static_cast<int32_t>(n); })},
      {"--accounts", true,
       int_flag("--accounts", 1, [](Options& o, int64_t n) { o.gen.accounts = static_cast<int32_t>(n); })},
      {"--runtime-scale", true, number_flag("--runtime-scale", [](Options& o, double d) { o.gen.runtime_scale = d; })},
  };
  return kFlags;
}

Result<Options> parse_options(const std::vector<std::string>& args) {
  Options o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string name = args[i], value;
    auto eq = name.find('=');
    bool inline_value = name.rfind("--", 0) == 0 && eq != std::string::npos;
    if (inline_value) value = name.substr(eq + 1), name = name.substr(0, eq);
    const Flag* flag = nullptr;
    for (const auto& f : flags())
      if (name == f.name) flag = &f;
    if (!flag) return make_error(fmt::format("unknown option {}", args[i]));
    if (flag->takes_value && !inline_value) {
      if (i + 1 >= args.size()) return make_error(fmt::format("{} needs a value", name));
      value = args[++i];
    }
    if (!flag->takes_value && inline_value) return make_error(fmt::format("{} takes no value", name));
    if (auto st = flag->apply(o, value); !st) return st.error();
  }
  return o;
}

int fail(const std::string& message, int status = 2) {
  std::fprintf(stderr, "drover sim: %s\n", message.c_str());
  return status;
}

Result<core::Cluster> load_cluster(const std::string& flag_value) {
  std::string path = config::resolve_config_path(flag_value);
  auto cfg = config::load_config({path, {}, {}});
  if (!cfg) return make_error(cfg.error().message + "\n  fix: give the configuration with --config PATH");
  if (cfg->diags.has_errors()) {
    std::string msg = fmt::format("{} has errors; the simulator needs a configuration the controller would accept:", path);
    for (const auto& d : cfg->diags.items())
      if (d.severity == Severity::kError) msg += "\n" + d.format();
    return make_error(msg + "\n  fix: run `drover config check --config " + path + "`");
  }
  auto cluster = config::build_core_cluster(*cfg);
  if (!cluster) return make_error(fmt::format("{}: {}", path, cluster.error().message));
  if (cluster->preempt.type != core::PreemptType::kNone) {
    // Said, not hidden: the replay is that of the configuration without preemption.
    std::fprintf(stderr,
                 "drover sim: warning: %s: PreemptType=%s: the simulator does not preempt (only the controller "
                 "does); this replay runs it as if PreemptType=preempt/none\n",
                 path.c_str(), cfg->preempt_type.c_str());
  }
  return std::move(*cluster);
}

// A progress bar on a terminal, redrawn at most ten times a second; nothing
// when standard output is not a terminal.
class ProgressBar {
 public:
  explicit ProgressBar(std::string label) : label_(std::move(label)), tty_(isatty(STDOUT_FILENO) != 0) {}
  std::function<void(const Progress&)> callback() {
    if (!tty_) return {};
    return [this](const Progress& p) { draw(p); };
  }
  void clear() {
    if (tty_ && drawn_) std::fputs("\r\033[K", stdout), std::fflush(stdout);
  }

 private:
  void draw(const Progress& p) {
    auto now = std::chrono::steady_clock::now();
    if (drawn_ && now - last_ < std::chrono::milliseconds(100) && p.done < p.total) return;
    last_ = now;
    drawn_ = true;
    double frac = p.total > 0 ? static_cast<double>(p.done) / static_cast<double>(p.total) : 1.0;
    double elapsed = std::chrono::duration<double>(now - start_).count();
    std::string eta = frac > 0.001 ? fmt::format("ETA {:.0f}s", elapsed * (1 - frac) / frac) : "ETA ?";
    int filled = static_cast<int>(frac * 30);
    std::printf("\r%s [%s%s] %3.0f%% %lld/%lld jobs  %s\033[K", label_.c_str(), std::string(filled, '#').c_str(),
                std::string(30 - filled, '.').c_str(), frac * 100, static_cast<long long>(p.done),
                static_cast<long long>(p.total), eta.c_str());
    std::fflush(stdout);
  }

  std::string label_;
  bool tty_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_;
};

// A configuration simulated: everything a report points at, kept alive together.
struct Run {
  core::Cluster cluster;
  SimResult result;
  RunReport report;
};

// A configuration read (its mistakes said before any simulation starts).
Result<std::unique_ptr<Run>> load_run(const std::string& config) {
  auto cluster = load_cluster(config);
  if (!cluster) return cluster.error();
  auto run = std::make_unique<Run>();
  run->cluster = std::move(*cluster);
  return run;
}

Status simulate_into(Run& run, const std::string& config, const Trace& trace, const Options& o,
                     const std::string& label) {
  ProgressBar bar("simulating " + label);
  SimOptions so = o.sopts;
  so.progress = bar.callback();
  auto result = simulate(run.cluster, trace, so);
  bar.clear();
  if (!result) return result.error();
  run.result = std::move(*result);
  run.report = RunReport{label, config, o.trace, &run.cluster, &trace, &run.result, {}};
  run.report.summary = summarize(run.cluster, trace, run.result);
  return {};
}

// --out is made (or found writable) before the simulation, so a long run is
// not lost to a directory it cannot write at the end.
Status prepare_out(const std::string& dir) {
  if (dir.empty()) return {};
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return make_error(fmt::format("--out {}: cannot create the directory: {}", dir, ec.message()));
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return make_error(fmt::format("--out {}: cannot write there: {}", dir, std::strerror(errno)));
  }
  return {};
}

void print_header(const Trace& t, const Options& o) {
  std::printf("trace %s: %zu jobs (%s)\n", o.trace.c_str(), t.jobs.size(), t.format.c_str());
  for (const auto& n : t.notes) std::printf("  note: %s\n", n.c_str());
}

// SWF traces say the machine they came from; say when it is not this one.
void print_fit(const Trace& t, const RunReport& r) {
  auto it = r.cluster->total_tres.find("cpu");
  int64_t cpus = it == r.cluster->total_tres.end() ? 0 : it->second;
  if (t.max_procs > 0 && t.max_procs != cpus) {
    std::printf("  note: the trace's machine had %lld processors (MaxProcs), %s has %lld CPUs\n",
                static_cast<long long>(t.max_procs), r.config_path.c_str(), static_cast<long long>(cpus));
  }
}

void print_speed(const RunReport& r) {
  const SimStats& s = r.summary.stats;
  std::printf("%s: simulated %lld jobs in %.2f s (%.0f jobs/s; %.2f s in the scheduler, %lld quick + %lld full passes",
              r.label.c_str(), static_cast<long long>(r.summary.trace_jobs), s.wall_s,
              s.wall_s > 0 ? static_cast<double>(r.summary.trace_jobs) / s.wall_s : 0.0, s.core_wall_s,
              static_cast<long long>(s.quick_passes), static_cast<long long>(s.full_passes));
  if (s.head_passes > 0) std::printf(", %lld of them on the head of the queue", static_cast<long long>(s.head_passes));
  if (s.carried_passes > 0) {
    std::printf(", %lld carrying the last walk on", static_cast<long long>(s.carried_passes));
  }
  std::printf(")\n");
}

void print_written(const std::vector<std::string>& files) {
  for (const auto& f : files) std::printf("wrote %s\n", f.c_str());
}

Result<Trace> load(const Options& o) {
  if (o.trace.empty()) return make_error("--trace FILE is required");
  return load_trace(o.trace, o.topts);
}

int run_cmd(const Options& o) {
  if (o.configs.size() > 1) return fail("run takes one --config (compare takes two)");
  const std::string config = o.configs.empty() ? "" : o.configs[0];
  auto run = load_run(config);
  if (!run) return fail(run.error().message, 1);
  auto trace = load(o);
  if (!trace) return fail(trace.error().message);
  if (auto st = prepare_out(o.out); !st) return fail(st.error().message, 1);
  if (auto st = simulate_into(**run, config, *trace, o, o.configs.empty() ? "run" : config); !st) {
    return fail(st.error().message, 1);
  }
  const RunReport& r = (*run)->report;
  if (o.json) {
    std::fputs(summary_json(r).c_str(), stdout);
  } else {
    print_header(*trace, o);
    print_fit(*trace, r);
    std::fputs(summary_table(r).c_str(), stdout);
    print_speed(r);
  }
  if (!o.out.empty()) {
    auto files = write_run(o.out, r);
    if (!files) return fail(files.error().message, 1);
    if (!o.json) print_written(*files);
  }
  return 0;
}

int compare_cmd(const Options& o) {
  if (o.configs.size() != 2) return fail("compare needs exactly two --config (A and B)");
  // Both configurations, the trace and --out are checked before either simulation runs.
  auto a = load_run(o.configs[0]);
  if (!a) return fail("A (" + o.configs[0] + "): " + a.error().message, 1);
  auto b = load_run(o.configs[1]);
  if (!b) return fail("B (" + o.configs[1] + "): " + b.error().message, 1);
  auto trace = load(o);
  if (!trace) return fail(trace.error().message);
  if (auto st = prepare_out(o.out); !st) return fail(st.error().message, 1);
  if (auto st = simulate_into(**a, o.configs[0], *trace, o, "A"); !st) {
    return fail("A (" + o.configs[0] + "): " + st.error().message, 1);
  }
  if (auto st = simulate_into(**b, o.configs[1], *trace, o, "B"); !st) {
    return fail("B (" + o.configs[1] + "): " + st.error().message, 1);
  }
  print_header(*trace, o);
  print_fit(*trace, (*a)->report);
  print_fit(*trace, (*b)->report);
  std::printf("A = %s\nB = %s\n", o.configs[0].c_str(), o.configs[1].c_str());
  std::fputs(compare_table((*a)->report, (*b)->report).c_str(), stdout);
  print_speed((*a)->report);
  print_speed((*b)->report);
  if (!o.out.empty()) {
    auto files = write_compare(o.out, (*a)->report, (*b)->report);
    if (!files) return fail(files.error().message, 1);
    print_written(*files);
  }
  return 0;
}

int gen_cmd(const Options& o) {
  GenTargets targets = seed_targets();
  if (!o.configs.empty()) {
    auto cluster = load_cluster(o.configs[0]);
    if (!cluster) return fail(cluster.error().message);
    auto t = targets_for(*cluster, o.gen);
    if (!t) return fail(o.configs[0] + ": " + t.error().message);
    targets = *t;
  }
  if (o.gen_format != "csv" && o.gen_format != "jsonl") return fail("gen --format: expected csv or jsonl");
  auto jobs = generate(o.gen, targets);
  std::string text = o.gen_format == "csv" ? write_native_csv(jobs) : write_native_jsonl(jobs);
  if (o.out.empty()) {
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  std::ofstream out(o.out, std::ios::binary);
  out << text;
  if (!out) return fail("--out " + o.out + ": cannot write the file", 1);
  std::fprintf(stderr, "wrote %zu jobs to %s\n", jobs.size(), o.out.c_str());
  return 0;
}

}  // namespace

int sim_main(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  // `drover sim --help`, `drover sim help`, `drover sim run --help`
  if (args[0] == "help" || asks_help(args)) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  auto opts = parse_options({args.begin() + 1, args.end()});
  if (!opts) return fail(opts.error().message + "\n" + kUsage);
  if (args[0] == "run") return run_cmd(*opts);
  if (args[0] == "compare") return compare_cmd(*opts);
  if (args[0] == "gen") return gen_cmd(*opts);
  return fail(fmt::format("unknown subcommand '{}' (run, compare, gen)\n{}", args[0], kUsage));
}

}  // namespace drover::sim
