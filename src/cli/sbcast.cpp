#include "cli/sbcast.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "cli/arg_scanner.hpp"
#include "cli/job_values.hpp"
#include "common/strings.hpp"

namespace drover::cli {
namespace {

enum SbOpt { kCompress, kExclude, kFanout, kForce, kJobId, kPreserve, kSendLibs, kSize, kTimeout, kVerbose, kVersion,
             kHelp, kUsage };

const std::vector<OptionSpec>& specs() {
  static const std::vector<OptionSpec> s = {
      {kCompress, "compress", 'C', ArgKind::kOptional}, {kExclude, "exclude", 0, ArgKind::kRequired},
      {kFanout, "fanout", 'F', ArgKind::kRequired},     {kForce, "force", 'f', ArgKind::kNone},
      {kJobId, "jobid", 'j', ArgKind::kRequired},       {kPreserve, "preserve", 'p', ArgKind::kNone},
      {kSendLibs, "send-libs", 0, ArgKind::kOptional},  {kSize, "size", 's', ArgKind::kRequired},
      {kTimeout, "timeout", 't', ArgKind::kRequired},   {kVerbose, "verbose", 'v', ArgKind::kNone},
      {kVersion, "version", 'V', ArgKind::kNone},       {kHelp, "help", 0, ArgKind::kNone},
      {kUsage, "usage", 0, ArgKind::kNone},
  };
  return s;
}

CliError bad(const std::string& message) { return cli_error("sbcast", message); }

// -s: bytes, or with a k/m suffix kibibytes/mebibytes; at most 8 MiB a block.
CliResult<int64_t> block_size(const std::string& v) {
  std::string digits = v;
  int64_t unit = 1;
  if (!digits.empty()) {
    char c = static_cast<char>(std::tolower(static_cast<unsigned char>(digits.back())));
    if (c == 'k' || c == 'm') {
      unit = c == 'k' ? 1024 : 1024 * 1024;
      digits.pop_back();
    }
  }
  auto n = parse_int(digits);
  if (!n || *n <= 0) return bad(fmt::format("Invalid block size: {} (bytes, or a number with k or m)", v));
  return std::min<int64_t>(*n * unit, kSbcastMaxBlock);
}

CliResult<bool> positive(const char* what, const std::string& v) {
  auto n = parse_int(v);
  if (!n || *n <= 0) return bad(fmt::format("Invalid {}: {}", what, v));
  return true;
}

// --send-libs[=yes|no]: copying the program's shared libraries is not built.
CliResult<bool> send_libs(const std::optional<std::string>& v) {
  std::string s = v.value_or("yes");
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s == "no" || s == "0" || s == "false") return true;
  if (s != "yes" && s != "1" && s != "true") return bad(fmt::format("Invalid --send-libs value: {}", s));
  return bad("--send-libs is not built in Drover: copy the libraries with sbcast one by one, or use a shared file "
             "system");
}

// -C[=lz4|none]: blocks travel as they are (no compression is built), so
// either choice gives the same file.
CliResult<bool> compress(const std::optional<std::string>& v) {
  if (!v || *v == "lz4" || *v == "none") return true;
  return bad(fmt::format("Invalid compression library: {} (lz4 or none)", *v));
}

CliResult<bool> apply(SbcastOptions& o, int id, const std::optional<std::string>& value) {
  const std::string v = value.value_or("");
  switch (id) {
    case kCompress: return compress(value);
    case kExclude: break;  // only with --send-libs
    case kFanout: return positive("fanout", v);
    case kForce: o.force = true; break;
    case kJobId: o.job_text = v; break;
    case kPreserve: o.preserve = true; break;
    case kSendLibs: return send_libs(value);
    case kSize: {
      auto n = block_size(v);
      if (!n) return n.error();
      o.block_size = *n;
      break;
    }
    case kTimeout: return positive("timeout", v);
    case kVerbose: ++o.verbose; break;
    case kVersion: o.print_version = true; break;
    case kHelp: case kUsage: o.print_help = true; break;
    default: break;
  }
  return true;
}

bool env_flag(const char* v) { return v && *v && std::string_view(v) != "0" && std::string_view(v) != "no"; }

}  // namespace

std::string sbcast_usage() {
  return "Usage: sbcast [OPTIONS] SOURCE DEST\n"
         "  -C, --compress[=lz4|none]  accepted; blocks are sent as they are\n"
         "  -f, --force                replace DEST where it exists\n"
         "  -F, --fanout=N             accepted; every node is written at once\n"
         "  -j, --jobid=JOB[.STEP]     the job (default: SLURM_JOB_ID), or one of its steps' nodes\n"
         "  -p, --preserve             the source's access and modification times too\n"
         "  -s, --size=N[k|m]          block size (at most 8m)\n"
         "  -t, --timeout=SECONDS      accepted\n"
         "  -v, --verbose              say what is sent where\n"
         "  -V, --version              the version\n"
         "A relative DEST is under the directory sbcast runs in. The file gets the source's mode.\n";
}

CliResult<SbcastOptions> parse_sbcast_options(const std::vector<std::string>& args, const EnvLookup& env) {
  SbcastOptions o;
  // SBCAST_* first: the command line overrides them.
  const std::pair<const char*, int> vars[] = {{"SBCAST_COMPRESS", kCompress}, {"SBCAST_FANOUT", kFanout},
                                              {"SBCAST_SEND_LIBS", kSendLibs}, {"SBCAST_SIZE", kSize},
                                              {"SBCAST_TIMEOUT", kTimeout}};
  for (const auto& [name, id] : vars) {
    const char* v = env(name);
    if (!v) continue;
    std::optional<std::string> value;
    if (*v) value = v;
    if (auto r = apply(o, id, value); !r) return r.error();
  }
  o.force = env_flag(env("SBCAST_FORCE"));
  o.preserve = env_flag(env("SBCAST_PRESERVE"));
  auto scan = scan_args(args, specs(), OperandMode::kPermute, "sbcast");
  if (!scan) return CliError{getopt_error_text(scan.error(), "sbcast"), kExitError};
  for (const auto& opt : scan->options) {
    if (auto r = apply(o, opt.id, opt.value); !r) return r.error();
  }
  if (o.print_help || o.print_version) return o;
  if (scan->operands.size() != 2) {
    return CliError{fmt::format("Need two file names, have {} names\nTry \"sbcast --help\" for more information\n",
                                scan->operands.size()),
                    kExitError};
  }
  o.source = scan->operands[0];
  o.dest = scan->operands[1];
  if (o.job_text.empty()) {
    const char* id = env("SLURM_JOB_ID");
    if (!id || !*id) id = env("SLURM_JOBID");
    if (!id || !*id) {
      return bad("Need a job id to run this command.  Run from within a Slurm job or use the --jobid option.");
    }
    o.job_text = id;
  }
  auto ref = parse_job_step_ref(o.job_text);
  if (!ref || ref->job <= 0 || ref->array_task) {
    std::string why = ref && ref->array_task ? "; an array element is named by its own job id (its SLURM_JOB_ID)" : "";
    return CliError{fmt::format("sbcast: error: Slurm job {} lookup error: Invalid job id specified{}\n", o.job_text, why),
                    kExitBadOption};
  }
  o.job = ref->job;
  o.step = ref->step;
  return o;
}

}  // namespace drover::cli
