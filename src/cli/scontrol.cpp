// scontrol: a table of keywords, and for `show` a table of entities.
//
// Built today, without a controller: `show hostnames|hostlist|hostlistsorted`,
// which behave as Slurm 22.05's (outputs, messages in Slurm's style, exit
// codes, keyword abbreviations, global options anywhere on the line). Every
// other keyword or entity goes to the controller (src/client) or says it is not built yet.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <sys/stat.h>
#include <vector>

#include "cli/cli_error.hpp"
#include "cli/commands.hpp"
#include "common/hostlist.hpp"
#include "common/strings.hpp"

namespace drover::cli {
namespace {

constexpr std::string_view kNeedsController =
    "Drover's scontrol has show job|node|partition|config|licenses|step|reservation|topology|aliases|daemons|hostnames|"
    "hostlist, update NodeName=/PartitionName=/JobId=, create/delete PartitionName=, hold, uhold, release, requeue, "
    "requeuehold, suspend, resume, top, wait_job, write batch_script, ping, reconfigure, setdebug, setdebugflags, "
    "shutdown and version so far";

// A keyword or entity with the shortest abbreviation scontrol accepts for it.
template <class Handler>
struct Named {
  std::string_view name;
  std::size_t min_len;
  Handler run;
};

// Case-insensitive abbreviation match, first entry in table order wins (as
// scontrol: "hostl" is hostlist, "hostlists" is hostlistsorted).
template <class Table>
auto* find_named(const Table& table, std::string_view word) {
  for (const auto& entry : table) {
    if (word.size() >= entry.min_len && word.size() <= entry.name.size() &&
        iequals(word, entry.name.substr(0, word.size()))) {
      return &entry;
    }
  }
  return static_cast<decltype(&table[0])>(nullptr);
}

void print_line(FILE* out, std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), out);
  std::fputc('\n', out);
}

// Slurm's style for a bad host list: the reason, then "Invalid hostlist: X".
void report_bad_hostlist(std::string_view expr, const Error& e) {
  std::fprintf(stderr, "scontrol: error: %s\n", e.message.c_str());
  std::fprintf(stderr, "Invalid hostlist: %.*s\n", static_cast<int>(expr.size()), expr.data());
}

// ------------------------------------------------------ show hostnames etc --

// `show hostnames [LIST]`: one name per line. Without LIST it reads
// SLURM_JOB_NODELIST (what the man page names), then SLURM_NODELIST (what
// Slurm 22.05 actually reads). Slurm 22.05 exits 0 even when the list is
// empty or invalid, after saying so on stderr; Drover keeps that exit code
// so scripts see the same thing.
std::string nodelist_from_env() {
  for (const char* var : {"SLURM_JOB_NODELIST", "SLURM_NODELIST"}) {
    const char* v = std::getenv(var);
    if (v && *v) return v;
  }
  return {};
}

int show_hostnames(const Args& ids, std::string_view) {
  std::string expr = ids.empty() ? nodelist_from_env() : ids[0];
  auto hosts = hostlist_expand(expr);
  if (!hosts) {
    report_bad_hostlist(expr, hosts.error());
    return 0;
  }
  if (hosts->empty()) std::fprintf(stderr, "scontrol: error: host list is empty\n");
  std::string out;
  for (const auto& h : *hosts) out.append(h).push_back('\n');
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

// A LIST starting with '/' names a file of host names separated by commas or
// new lines (Slurm's rule for hostlist and hostlistsorted).
Result<std::string> hostlist_argument(const std::string& arg) {
  if (arg.empty() || arg[0] != '/') return arg;
  struct stat st {};
  std::ifstream in(arg);
  if (!in || stat(arg.c_str(), &st) != 0) return make_error("Can not open " + arg);
  if (!S_ISREG(st.st_mode)) return make_error("Error reading " + arg + ": not a regular file");
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  for (char& c : s) {
    if (c == '\n' || c == '\r') c = ',';
  }
  return s;
}

int show_compressed(const Args& ids, std::string_view entity, bool sorted) {
  if (ids.empty()) {
    std::fprintf(stderr, "scontrol: error: show %.*s needs a host list, e.g. scontrol show %.*s gpu[01-04],gpu07\n",
                 static_cast<int>(entity.size()), entity.data(), static_cast<int>(entity.size()), entity.data());
    return 1;
  }
  auto expr = hostlist_argument(ids[0]);
  if (!expr) {
    std::fprintf(stderr, "%s\n", expr.error().message.c_str());
    return 1;
  }
  auto ranged = hostlist_ranged(*expr, sorted ? HostlistOrder::kSorted : HostlistOrder::kAsGiven);
  if (!ranged) {
    report_bad_hostlist(*expr, ranged.error());
    return 1;
  }
  print_line(stdout, *ranged);
  return 0;
}

int show_hostlist(const Args& ids, std::string_view entity) { return show_compressed(ids, entity, false); }
int show_hostlistsorted(const Args& ids, std::string_view entity) { return show_compressed(ids, entity, true); }

// Drover has no network topology (TopologyPlugin is not read), which Slurm
// answers this way when none is configured (and exits 0, on the anchor cluster).
int show_topology(const Args& ids, std::string_view) {
  if (ids.empty()) {
    std::fprintf(stderr, "scontrol: error: No topology information available\n");
  } else {
    std::fprintf(stderr, "scontrol: error: Topology information contains no switch or node named %s\n", ids[0].c_str());
  }
  return 0;
}

// NodeHostname aliases (front ends): Drover has none, so nothing is listed.
int show_aliases(const Args&, std::string_view) { return 0; }

// Drover has no burst buffers and no federation: nothing to list, as Slurm
// 22.05 printed nothing (exit 0) for a cluster without them (anchor cluster).
int show_nothing(const Args&, std::string_view) { return 0; }

int show_needs_controller(const Args&, std::string_view entity) {
  return not_implemented("scontrol show " + std::string(entity), kNeedsController);
}

// ids: the words after the entity; entity: its full name.
using EntityHandler = int (*)(const Args& ids, std::string_view entity);

// Entities of `show`, in the order abbreviations are resolved.
const Named<EntityHandler> kEntities[] = {
    {"hostnames", 5, show_hostnames},
    {"hostlist", 5, show_hostlist},
    {"hostlistsorted", 9, show_hostlistsorted},
    {"aliases", 2, show_aliases},
    {"assoc_mgr", 2, show_needs_controller},
    {"bbstat", 2, show_needs_controller},
    {"burstbuffer", 2, show_nothing},
    {"config", 1, show_needs_controller},
    {"daemons", 2, show_needs_controller},
    {"dwstat", 2, show_needs_controller},
    {"federation", 2, show_nothing},
    {"frontend", 2, show_needs_controller},
    {"job", 1, show_needs_controller},
    {"licenses", 1, show_needs_controller},
    {"node", 1, show_needs_controller},
    {"partition", 1, show_needs_controller},
    {"reservations", 1, show_needs_controller},
    {"slurmd", 2, show_needs_controller},
    {"step", 2, show_needs_controller},
    {"topology", 1, show_topology},
};

// --------------------------------------------------------------- keywords --

struct Invocation {
  std::string keyword;  // as typed
  Args rest;            // words after the keyword
};

int run_show(const Invocation& inv) {
  if (inv.rest.empty()) {
    std::fprintf(stderr, "too few arguments for keyword:%s\n", inv.keyword.c_str());
    return 1;
  }
  const auto* entity = find_named(kEntities, inv.rest[0]);
  // assoc_mgr takes any number of words (users=, accounts=, qos=, flags=).
  if (inv.rest.size() > 2 && !(entity && entity->name == std::string_view("assoc_mgr"))) {
    std::fprintf(stderr, "too many arguments for keyword:%s\n", inv.keyword.c_str());
    return 1;
  }
  if (!entity) {
    std::fprintf(stderr, "invalid entity:%s for keyword:%s \n", inv.rest[0].c_str(), inv.keyword.c_str());
    return 1;
  }
  return entity->run(Args(inv.rest.begin() + 1, inv.rest.end()), entity->name);
}

int run_needs_controller(const Invocation& inv) {
  return not_implemented("scontrol " + to_lower(inv.keyword), kNeedsController);
}

// scontrol version: the version line every command prints for --version.
int run_version(const Invocation&) {
  std::printf("%s\n", kSlurmVersionLine);
  return 0;
}

// Words that only change scontrol's interactive modes, or leave it: nothing to do here.
int run_no_op(const Invocation&) { return 0; }

int run_help(const Invocation&);

using KeywordHandler = int (*)(const Invocation&);

const Named<KeywordHandler> kKeywords[] = {
    {"show", 3, run_show},
    {"help", 2, run_help},
    {"exit", 4, run_no_op},
    {"quit", 4, run_no_op},
    {"all", 2, run_no_op},
    {"details", 3, run_no_op},
    {"hide", 2, run_no_op},
    {"oneliner", 3, run_no_op},
    {"quiet", 4, run_no_op},
    {"verbose", 4, run_no_op},
    {"abort", 5, run_needs_controller},
    {"cancel_reboot", 3, run_needs_controller},
    {"cluster", 2, run_needs_controller},
    {"completing", 2, run_needs_controller},
    {"create", 2, run_needs_controller},
    {"delete", 3, run_needs_controller},
    {"errnumstr", 2, run_needs_controller},
    {"fsdampeningfactor", 2, run_needs_controller},
    {"hold", 3, run_needs_controller},
    {"holdu", 5, run_needs_controller},
    {"listpids", 4, run_needs_controller},
    {"notify", 3, run_needs_controller},
    {"pidinfo", 3, run_needs_controller},
    {"ping", 3, run_needs_controller},
    {"reboot", 3, run_needs_controller},
    {"reconfigure", 3, run_needs_controller},
    {"release", 3, run_needs_controller},
    {"requeue", 3, run_needs_controller},
    {"requeuehold", 8, run_needs_controller},
    {"resume", 3, run_needs_controller},
    {"schedloglevel", 3, run_needs_controller},
    {"setdebug", 4, run_needs_controller},
    {"setdebugflags", 9, run_needs_controller},
    {"shutdown", 3, run_needs_controller},
    {"suspend", 2, run_needs_controller},
    {"takeover", 2, run_needs_controller},
    {"token", 3, run_needs_controller},
    {"top", 3, run_needs_controller},
    {"uhold", 2, run_needs_controller},
    {"update", 1, run_needs_controller},
    {"version", 4, run_version},
    {"wait_job", 4, run_needs_controller},
    {"write", 2, run_needs_controller},
};

void usage(FILE* out) {
  std::fprintf(out,
               "usage: scontrol [OPTIONS] COMMAND [ARGS]\n\n"
               "Working now (no controller needed):\n"
               "  show hostnames [LIST]     print each host of LIST (default: $SLURM_JOB_NODELIST), one per line\n"
               "  show hostlist LIST        compress LIST into a range expression, keeping its order\n"
               "  show hostlistsorted LIST  the same, sorted (duplicates kept)\n"
               "  LIST is an expression such as gpu[01-32],cpu[1-4] or /path/to/a/file of host names.\n\n"
               "With the controller (DROVER_CONF, or --config PATH first):\n"
               "  show job|jobid|node|partition|config|step|licenses|reservation,\n"
               "  update NodeName=... State=DRAIN|RESUME|DOWN Reason=..., update PartitionName=... Key=Value,\n"
               "  update JobId=... Key=Value, create PartitionName=... Key=Value, delete PartitionName=...,\n"
               "  create reservation StartTime=... Duration=... Nodes=... Users=..., update ReservationName=...,\n"
               "  delete ReservationName=...,\n"
               "  hold, uhold, release, requeue, requeuehold, suspend, resume,\n"
               "  write batch_script, ping, reconfigure, top, shutdown [slurmctld], wait_job. Other commands are\n"
               "  not built yet.\n"
               "Options accepted: -a -d -F -h -o -Q -v -V, --all,\n"
               "--details, --future, --help, --hide, --local, --oneliner, --quiet, --sibling,\n"
               "--federation, --verbose, --version, -M/--clusters NAME, -u/--uid UID.\n");
}

int run_help(const Invocation&) {
  usage(stdout);
  return 0;
}

// ---------------------------------------------------------------- options --

struct OptionSpec {
  std::string_view long_name;
  char short_name;
  bool takes_value;
};

const OptionSpec kOptions[] = {
    {"all", 'a', false},      {"details", 'd', false},    {"future", 'F', false},
    {"help", 'h', false},     {"hide", 0, false},         {"local", 0, false},
    {"oneliner", 'o', false}, {"quiet", 'Q', false},      {"sibling", 0, false},
    {"federation", 0, false}, {"verbose", 'v', false},    {"version", 'V', false},
    {"clusters", 'M', true},  {"cluster", 0, true},       {"uid", 'u', true},
    {"usage", 0, false},
};

int option_error(const std::string& what) {
  std::fprintf(stderr, "scontrol: %s\nTry \"scontrol --help\" for more information\n", what.c_str());
  return 1;
}

using Parsed = ScontrolOptions;

void note(const OptionSpec& spec, const std::string& value, Parsed& parsed) {
  parsed.help |= spec.long_name == "help" || spec.long_name == "usage";
  parsed.version |= spec.long_name == "version";
  parsed.one_line |= spec.long_name == "oneliner";
  parsed.quiet |= spec.long_name == "quiet";
  if (spec.long_name == "details") parsed.details += 1;
  if (spec.long_name == "clusters" || spec.long_name == "cluster") parsed.clusters = value;
}

// "--name", "--name=value" or "--name value"; a unique prefix of a name counts (as getopt_long).
int parse_long(const Args& args, std::size_t& i, Parsed& parsed) {
  const std::string& a = args[i];
  std::size_t eq = a.find('=');
  std::string_view name = std::string_view(a).substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
  const OptionSpec* spec = nullptr;
  int matches = 0;
  for (const auto& o : kOptions) {
    if (o.long_name == name) {
      spec = &o, matches = 1;
      break;
    }
    if (!name.empty() && o.long_name.substr(0, name.size()) == name) spec = &o, ++matches;
  }
  if (matches != 1) return option_error((matches ? "option '" : "unrecognized option '") + a + (matches ? "' is ambiguous" : "'"));
  if (!spec->takes_value && eq != std::string::npos) {
    return option_error("option '--" + std::string(spec->long_name) + "' doesn't allow an argument");
  }
  if (spec->takes_value && eq == std::string::npos && ++i >= args.size()) {
    return option_error("option '--" + std::string(spec->long_name) + "' requires an argument");
  }
  std::string value;
  if (spec->takes_value) value = eq == std::string::npos ? args[i] : a.substr(eq + 1);
  note(*spec, value, parsed);
  return 0;
}

// "-dv", "-M name", "-Mname".
int parse_short(const Args& args, std::size_t& i, Parsed& parsed) {
  const std::string& a = args[i];
  for (std::size_t k = 1; k < a.size(); ++k) {
    const OptionSpec* spec = nullptr;
    for (const auto& o : kOptions) {
      if (o.short_name == a[k]) spec = &o;
    }
    if (!spec) return option_error(std::string("invalid option -- '") + a[k] + "'");
    if (spec->takes_value) {
      if (k + 1 == a.size() && ++i >= args.size()) {
        return option_error(std::string("option requires an argument -- '") + a[k] + "'");
      }
      note(*spec, k + 1 < a.size() ? a.substr(k + 1) : args[i], parsed);  // -Mname, -M name
      break;
    }
    note(*spec, "", parsed);
  }
  return 0;
}

}  // namespace

// GNU-style: options may appear anywhere; "--" ends them.
int parse_scontrol_options(const Args& args, ScontrolOptions& parsed) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      parsed.words.insert(parsed.words.end(), args.begin() + static_cast<long>(i) + 1, args.end());
      break;
    }
    int rc = 0;
    // setdebugflags takes "-Flag" words (`scontrol setdebugflags -protocol`).
    const bool flag_words = !parsed.words.empty() && iequals(parsed.words[0], "setdebugflags");
    if (a.size() < 2 || a[0] != '-' || flag_words) {
      parsed.words.push_back(a);
    } else {
      rc = a[1] == '-' ? parse_long(args, i, parsed) : parse_short(args, i, parsed);
    }
    if (rc != 0) return rc;
  }
  // `show nodes=cpu01`, `show job=12`, `show job=` (every job): the entity
  // and its name joined by '=', which Slurm 22.05's scontrol takes too.
  auto& w = parsed.words;
  if (w.size() >= 2 && w[0].size() >= 3 && w[0].size() <= 4 && iequals(w[0], std::string_view("show").substr(0, w[0].size()))) {
    const auto eq = w[1].find('=');
    if (eq != std::string::npos && eq > 0) {
      std::string name = w[1].substr(eq + 1);
      w[1].resize(eq);
      if (!name.empty()) w.insert(w.begin() + 2, std::move(name));
    }
  }
  return 0;
}

int scontrol_main(const Args& args) {
  Parsed parsed;
  if (int rc = parse_scontrol_options(args, parsed); rc != 0) return rc;
  if (parsed.help) {
    usage(stdout);
    return 0;
  }
  if (parsed.version) return run_version({});
  if (parsed.words.empty()) {
    std::fprintf(stderr, "scontrol: error: no command given (see scontrol --help)\n");
    return 1;
  }
  Invocation inv{parsed.words[0], Args(parsed.words.begin() + 1, parsed.words.end())};
  const auto* keyword = find_named(kKeywords, inv.keyword);
  if (!keyword) {
    std::fprintf(stderr, "invalid keyword: %s\n", inv.keyword.c_str());
    return 1;
  }
  return keyword->run(inv);
}

}  // namespace drover::cli
