#include "cli/sprio_output.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "cli/display_options.hpp"
#include "cli/format_engine.hpp"
#include "cli/job_options.hpp"
#include "cli/job_values.hpp"
#include "common/strings.hpp"

namespace drover::cli {
namespace {

// A line: a job's factors, or (weights set) the line of configured weights.
struct Row {
  const PriorityView* job = nullptr;
  const PriorityWeights* weights = nullptr;
};

std::string weighted_tres(const PriorityView& j) {
  std::vector<std::string> parts;
  for (const auto& [name, v] : j.tres) parts.push_back(fmt::format("{}={}", name, v));
  return join(parts, ",");
}

std::string norm_tres(const PriorityView& j) {
  std::vector<std::string> parts;
  for (const auto& [name, v] : j.norm_tres) parts.push_back(fmt::format("{}={:.2f}", name, v));
  return join(parts, ",");
}

std::string norm(double v) { return fmt::format("{:.7f}", v); }

// A job factor, or on the weights line the weight (`w`), blank when `w` < 0.
Field<Row> factor(char code, std::string_view header, int64_t PriorityView::*value, int64_t PriorityWeights::*w) {
  return {FieldInfo{code, "", header},
          [value, w](const Row& r) {
            if (r.weights) return w ? std::to_string(r.weights->*w) : std::string();
            return std::to_string(r.job->*value);
          }};
}

// A normalized factor; on the weights line its weight, as Slurm 22.05's `sprio -w -o %a...` showed.
Field<Row> normalized(char code, std::string_view header, double PriorityView::*value, int64_t PriorityWeights::*w) {
  return {FieldInfo{code, "", header}, [value, w](const Row& r) {
            return r.weights ? std::to_string(r.weights->*w) : norm(r.job->*value);
          }};
}

Field<Row> text(char code, std::string_view header, std::function<std::string(const PriorityView&)> get,
                std::string weights_text = "") {
  return {FieldInfo{code, "", header},
          [get, weights_text](const Row& r) { return r.weights ? weights_text : get(*r.job); }};
}

const std::vector<Field<Row>>& sprio_fields() {
  using P = PriorityView;
  using W = PriorityWeights;
  static const std::vector<Field<Row>> fields = {
      normalized('a', "AGE", &P::norm_age, &W::age),
      factor('A', "AGE", &P::age, &W::age),
      normalized('b', "ASSOC", &P::norm_assoc, &W::assoc),
      factor('B', "ASSOC", &P::assoc, &W::assoc),
      text('c', "CLUSTER", [](const P&) { return std::string("(null)"); }),
      normalized('f', "FAIRSHARE", &P::norm_fairshare, &W::fairshare),
      factor('F', "FAIRSHARE", &P::fairshare, &W::fairshare),
      text('i', "JOBID", [](const P& j) { return std::to_string(j.job_id); }, "Weights"),
      normalized('j', "JOBSIZE", &P::norm_jobsize, &W::jobsize),
      factor('J', "JOBSIZE", &P::jobsize, &W::jobsize),
      factor('N', "NICE", &P::nice, nullptr),
      normalized('p', "PARTITION", &P::norm_partition, &W::partition),
      factor('P', "PARTITION", &P::partition_factor, &W::partition),
      normalized('q', "QOS", &P::norm_qos, &W::qos),
      factor('Q', "QOS", &P::qos_factor, &W::qos),
      text('r', "PARTITION", [](const P& j) { return j.partition; }),
      {FieldInfo{'S', "", "SITE"}, [](const Row& r) { return r.weights ? std::string("1") : std::to_string(r.job->site); }},
      {FieldInfo{'t', "", "TRES"}, [](const Row& r) { return r.weights ? std::string() : norm_tres(*r.job); }},
      {FieldInfo{'T', "", "TRES"}, [](const Row& r) { return r.weights ? r.weights->tres : weighted_tres(*r.job); }},
      text('u', "USER", [](const P& j) { return j.user; }),
      factor('Y', "PRIORITY", &P::priority, nullptr),
      {FieldInfo{'y', "", "PRIORITY"},
       [](const Row& r) { return r.weights ? std::string() : fmt::format("{:.14f}", r.job->norm_priority); }},
  };
  return fields;
}

// Slurm's default columns; a factor with weight 0 is left out (not with -l).
std::string default_format(const SprioOptions& o, const PriorityWeights& w) {
  struct Col {
    const char* text;
    bool keep;
  };
  bool all = o.long_format;
  std::vector<Col> cols;
  if (o.normalized) {
    // -u adds the user's column (Slurm 22.05 on the anchor cluster), as -l does.
    const bool user = o.long_format || !o.users.empty();
    cols = {{"%.15i", true}, {"%9r", true}, {"%.8u", user}, {"%10y", true},
            {"%10a", all || w.age}, {"%10b", all || w.assoc}, {"%10f", all || w.fairshare},
            {"%10j", all || w.jobsize}, {"%10p", all || w.partition}, {"%10q", all || w.qos},
            {"%20t", all || !w.tres.empty()}};
  } else {
    const bool user = o.long_format || !o.users.empty();
    cols = {{"%.15i", true}, {"%9r", true}, {"%.8u", user}, {"%.10Y", true}, {"%.10S", true},
            {"%.10A", all || w.age}, {"%.10B", all || w.assoc}, {"%.10F", all || w.fairshare},
            {"%.10J", all || w.jobsize}, {"%.10P", all || w.partition}, {"%.10Q", all || w.qos},
            {"%.11N", o.long_format}, {"%.20T", all || !w.tres.empty()}};
  }
  std::vector<std::string> kept;
  for (const auto& c : cols)
    if (c.keep) kept.push_back(c.text);
  return join(kept, " ");
}

enum SpOpt { kNoHeader, kJobs, kLong, kClusters, kNorm, kFormat, kPartition, kUser, kVerbose, kVersion, kWeights,
             kHelp, kUsage, kLocal, kFederation, kSort };

const std::vector<OptionSpec>& sprio_specs() {
  static const std::vector<OptionSpec> specs = {
      {kNoHeader, "noheader", 'h', ArgKind::kNone}, {kJobs, "jobs", 'j', ArgKind::kOptional},
      {kLong, "long", 'l', ArgKind::kNone},         {kClusters, "clusters", 'M', ArgKind::kRequired},
      {kNorm, "norm", 'n', ArgKind::kNone},         {kFormat, "format", 'o', ArgKind::kRequired},
      {kPartition, "partition", 'p', ArgKind::kRequired}, {kUser, "user", 'u', ArgKind::kRequired},
      {kVerbose, "verbose", 'v', ArgKind::kNone},   {kVersion, "version", 'V', ArgKind::kNone},
      {kWeights, "weights", 'w', ArgKind::kNone},   {kHelp, "help", 0, ArgKind::kNone},
      {kUsage, "usage", 0, ArgKind::kNone},         {kLocal, "local", 0, ArgKind::kNone},
      {kFederation, "federation", 0, ArgKind::kNone}, {kSort, "sort", 'S', ArgKind::kRequired},
      {kFederation, "sibling", 0, ArgKind::kNone},  // no federation: every job is this cluster's own
  };
  return specs;
}

CliResult<bool> apply_option(SprioOptions& o, const ScannedOption& opt) {
  const std::string v = opt.value.value_or("");
  switch (opt.id) {
    case kNoHeader: o.noheader = true; break;
    case kJobs:
      for (const auto& id : split(v, ',')) {
        if (id.empty()) continue;
        auto n = parse_count(id);
        if (!n) return cli_error("sprio", fmt::format("Invalid job id: {}", id));
        o.job_ids.push_back(*n);
      }
      break;
    case kLong: o.long_format = true; break;
    case kNorm: o.normalized = true; break;
    case kFormat: o.format = v; break;
    case kPartition: o.partitions = comma_list(v); break;
    case kUser: o.users = comma_list(v); break;
    case kClusters: o.clusters = v; break;
    case kVersion: o.print_version = true; break;
    case kWeights: o.weights = true; break;
    case kHelp: case kUsage: o.print_help = true; break;
    default: break;
  }
  return true;
}

bool selected(const SprioOptions& o, const PriorityView& j) {
  auto in = [](const std::vector<std::string>& l, const std::string& v) {
    return l.empty() || std::find(l.begin(), l.end(), v) != l.end();
  };
  bool id_ok = o.job_ids.empty() || std::find(o.job_ids.begin(), o.job_ids.end(), j.job_id) != o.job_ids.end();
  return id_ok && in(o.users, j.user) && in(o.partitions, j.partition);
}

}  // namespace

CliResult<SprioOptions> parse_sprio_options(const std::vector<std::string>& args,
                                            const std::map<std::string, std::string>& env) {
  SprioOptions o;
  if (auto it = env.find("SPRIO_FORMAT"); it != env.end()) o.format = it->second;
  // -j's list is optional, yet Slurm 22.05's sprio takes it from the next
  // word too ("sprio -j 1008,1009"), as it did on the anchor cluster.
  std::vector<std::string> joined;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const bool bare = args[i] == "-j" || args[i] == "--jobs";
    if (bare && i + 1 < args.size() && !args[i + 1].empty() && args[i + 1][0] != '-') {
      joined.push_back((args[i] == "-j" ? "-j" : "--jobs=") + args[i + 1]);
      ++i;
    } else {
      joined.push_back(args[i]);
    }
  }
  return scan_display_options(joined, sprio_specs(), "sprio", std::move(o), apply_option);
}

CommandOutput render_sprio(const SprioOptions& opts, const std::vector<PriorityView>& jobs,
                           const PriorityWeights& weights) {
  if (auto early = version_or_usage(
          opts.print_version, opts.print_help,
          "Usage: sprio [-j jid[s]] [-u user_name[s]] [-o format] [-p partitions] [--federation] [--local]\n"
          "             [--sort sort_list] [--usage] [-hlnvVw]\n"))
    return *early;
  CommandOutput result;
  const auto& fields = sprio_fields();
  ParsedFormat parsed = parse_percent_format(opts.format.value_or(default_format(opts, weights)), field_infos(fields));
  // Slurm's words; the unknown item prints nothing (Slurm 22.05: `-o '%i %o'` heads "JOBID ").
  for (const auto& bad : parsed.invalid) result.err += fmt::format("sprio: error: Invalid job format specification: {}\n", bad);
  for (auto& item : parsed.layout.items) {
    if (item.field < 0 && !item.suffix.empty() && item.suffix.front() == '%') item.suffix.clear();
  }
  std::vector<Row> rows;
  if (opts.weights) {
    rows.push_back(Row{nullptr, &weights});
  } else {
    std::vector<const PriorityView*> picked;
    for (const auto& j : jobs)
      if (selected(opts, j)) picked.push_back(&j);
    std::stable_sort(picked.begin(), picked.end(),
                     [](const PriorityView* a, const PriorityView* b) { return a->job_id < b->job_id; });
    for (const auto* j : picked) rows.push_back(Row{j, nullptr});
    // Slurm 22.05's sprio says so, without a header, only for -j; with -u
    // alone and nothing pending it printed the header (anchor cluster).
    if (picked.empty() && !opts.job_ids.empty()) {
      result.out = "Unable to find jobs matching user/id(s) specified\n";
      return result;
    }
  }
  result.out = render_table(parsed.layout, fields, rows, !opts.noheader);
  return result;
}

}  // namespace drover::cli
