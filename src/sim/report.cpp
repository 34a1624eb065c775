#include "sim/report.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/strings.hpp"
#include "sim/svg_plot.hpp"
#include "sim/trace_fields.hpp"

namespace drover::sim {
namespace {

using Json = nlohmann::ordered_json;

std::string partition_of(const RunReport& r, const JobRecord& j, const core::JobSpec& s) {
  if (j.partition >= 0) return r.cluster->partitions[j.partition].name;
  return join(s.partitions, ",");
}

Json wait_json(const WaitStats& w) {
  return Json{{"jobs", w.jobs}, {"mean_s", w.mean}, {"p50_s", w.p50}, {"p95_s", w.p95}, {"p99_s", w.p99}, {"max_s", w.max}};
}

Json use_json(const TresUse& u) { return Json{{"cpu", u.cpu}, {"gpu", u.gpu}, {"mem", u.mem}}; }

bool is_count(const std::string& name) {
  return name == "jobs" || name == "rejected" || name == "never_ran" || name == "timeouts" ||
         (name.size() > 5 && name.compare(name.size() - 5, 5, ".jobs") == 0);
}

Json summary_object(const RunReport& r) {
  const Summary& s = r.summary;
  Json util = use_json(s.utilization);
  Json parts = Json::object();
  for (const auto& [p, u] : s.utilization_by_partition) parts[p] = use_json(u);
  util["by_partition"] = parts;
  Json qos = Json::object();
  for (const auto& [q, w] : s.wait_by_qos) qos[q] = wait_json(w);
  Json j{{"config", r.config_path}, {"trace", r.trace_path}, {"trace_jobs", s.trace_jobs}};
  for (const auto& row : headline_rows(s)) {
    if (is_count(row.name)) {
      j[row.name] = static_cast<int64_t>(row.value);
    } else {
      j[row.name] = row.value;
    }
  }
  j["failed"] = s.failed;
  j["bounded_slowdown_tau_s"] = kSlowdownBound;
  j["utilization"] = util;
  j["immediate_fraction"] = s.immediate_fraction;
  j["backfilled_fraction"] = s.backfilled_fraction;
  j["reserved_fraction"] = s.reserved_fraction;
  j["stranded_gpu_hours"] = s.stranded_gpu_hours;
  j["jain_fairness_by_user"] = s.jain_fairness_by_user;
  j["wait_by_qos"] = qos;
  j["scheduler_passes"] = Json{{"quick", s.stats.quick_passes}, {"full", s.stats.full_passes}};
  j["notes"] = r.trace->notes;
  return j;
}

std::string value_text(const std::string& name, double v) {
  if (is_count(name)) return fmt::format("{:.0f}", v);
  if (name.size() > 2 && name.compare(name.size() - 2, 2, "_s") == 0) return fmt::format("{:.1f}", v);
  return fmt::format("{:.4f}", v);
}

Status write_file(const std::filesystem::path& p, const std::string& text, std::vector<std::string>& written) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  if (!out) return make_error(fmt::format("cannot write {}", p.string()));
  written.push_back(p.string());
  return {};
}

Status make_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return make_error(fmt::format("--out {}: cannot create the directory: {}", dir, ec.message()));
  return {};
}

bool has_gpus(const core::Cluster& c) {
  for (const auto& n : c.nodes)
    if (n.gpus() > 0) return true;
  return false;
}

Plot utilization_plot(const std::string& what, const std::string& title) {
  Plot p;
  p.title = title;
  p.x_label = "hours since the first submit";
  p.y_label = what + " allocated (fraction)";
  p.y_max = 1.0;
  return p;
}

Plot cdf_plot(const std::string& title) {
  Plot p;
  p.title = title;
  p.x_label = "wait (seconds, log scale)";
  p.y_label = "fraction of jobs";
  p.x_log = true;
  p.y_max = 1.0;
  return p;
}

// Series of run `r` into plot `p` (colour by position; dashed for a second run).
void add_lines(Plot& p, std::vector<Series> series, const std::string& suffix, bool dashed) {
  int color = 0;
  for (auto& s : series) {
    if (!suffix.empty()) s.name += " " + suffix;
    p.lines.push_back(PlotLine{std::move(s), color++, dashed});
  }
}

Status write_plots(const std::filesystem::path& dir, const std::vector<const RunReport*>& runs,
                   std::vector<std::string>& written) {
  const bool two = runs.size() == 2;
  for (Resource res : {Resource::kCpu, Resource::kGpu}) {
    if (res == Resource::kGpu && !has_gpus(*runs[0]->cluster) && (!two || !has_gpus(*runs[1]->cluster))) continue;
    const std::string what = res == Resource::kCpu ? "CPUs" : "GPUs";
    Plot p = utilization_plot(what, what + " allocated over time, per partition" + (two ? " (A solid, B dashed)" : ""));
    for (std::size_t i = 0; i < runs.size(); ++i) {
      add_lines(p, utilization_series(*runs[i]->cluster, *runs[i]->result, res), two ? runs[i]->label : "", i == 1);
    }
    const char* file = res == Resource::kCpu ? "utilization_cpu.svg" : "utilization_gpu.svg";
    if (auto st = write_file(dir / file, render_svg(p), written); !st) return st;
  }
  Plot cdf = cdf_plot(two ? "CDF of job waits (A solid, B dashed)" : "CDF of job waits");
  for (std::size_t i = 0; i < runs.size(); ++i) {
    cdf.lines.push_back(PlotLine{wait_cdf(*runs[i]->result, two ? runs[i]->label : "all jobs"), 0, i == 1});
  }
  return write_file(dir / "wait_cdf.svg", render_svg(cdf), written);
}

}  // namespace

std::string jobs_csv(const RunReport& r) {
  std::string out = "id,user,account,partition,qos,submit,start,end,wait,run,nodes,cpus,gpus,mem_mb,state,how,note\n";
  for (std::size_t i = 0; i < r.result->jobs.size(); ++i) {
    const JobRecord& j = r.result->jobs[i];
    const TraceJob& t = r.trace->jobs[i];
    std::string qos = j.qos >= 0 ? r.cluster->qos[j.qos].name : t.spec.qos;
    out += fmt::format("{},{},{},{},{},{},", csv_quote(t.label), csv_quote(t.spec.user), csv_quote(t.spec.account),
                       csv_quote(partition_of(r, j, t.spec)), csv_quote(qos), j.submit);
    if (j.started()) {
      out += fmt::format("{},{},{},{},{},{},{},{},", j.start, j.end, j.start - j.submit, j.end - j.start, j.nodes,
                         j.cpus, j.gpus, j.mem_mb);
    } else {
      out += ",,,,,,,,";
    }
    out += fmt::format("{},{},{}\n", job_state_name(j.state), j.started() ? start_how_name(j.how) : "",
                       csv_quote(j.note));
  }
  return out;
}

std::string summary_json(const RunReport& r) { return summary_object(r).dump(2) + "\n"; }

std::string summary_table(const RunReport& r) {
  std::string out;
  for (const auto& row : metric_rows(r.summary)) {
    out += fmt::format("  {:<40} {:>16}\n", row.name, value_text(row.name, row.value));
  }
  return out;
}

std::string compare_table(const RunReport& a, const RunReport& b) {
  auto ra = metric_rows(a.summary), rb = metric_rows(b.summary);
  std::map<std::string, double> bvals;
  for (const auto& row : rb) bvals[row.name] = row.value;
  std::string out = fmt::format("  {:<40} {:>16} {:>16} {:>10}\n", "metric", "A", "B", "B/A");
  auto line = [&](const std::string& name, double va, std::optional<double> vb) {
    std::string ratio = vb && va != 0 ? fmt::format("{:.3f}", *vb / va) : "-";
    out += fmt::format("  {:<40} {:>16} {:>16} {:>10}\n", name, value_text(name, va),
                       vb ? value_text(name, *vb) : "-", ratio);
  };
  for (const auto& row : ra) {
    auto it = bvals.find(row.name);
    line(row.name, row.value, it == bvals.end() ? std::nullopt : std::optional<double>(it->second));
    if (it != bvals.end()) bvals.erase(it);
  }
  for (const auto& row : rb) {  // metrics only B has (a partition or QOS A lacks)
    if (bvals.count(row.name)) out += fmt::format("  {:<40} {:>16} {:>16} {:>10}\n", row.name, "-",
                                                  value_text(row.name, row.value), "-");
  }
  return out;
}

std::string compare_json(const RunReport& a, const RunReport& b) {
  Json j{{"a", summary_object(a)}, {"b", summary_object(b)}};
  Json ratios = Json::object();
  std::map<std::string, double> bvals;
  for (const auto& row : metric_rows(b.summary)) bvals[row.name] = row.value;
  for (const auto& row : metric_rows(a.summary)) {
    auto it = bvals.find(row.name);
    if (it != bvals.end() && row.value != 0) ratios[row.name] = it->second / row.value;
  }
  j["b_over_a"] = ratios;
  return j.dump(2) + "\n";
}

Result<std::vector<std::string>> write_run(const std::string& dir, const RunReport& r) {
  if (auto st = make_dir(dir); !st) return st.error();
  std::vector<std::string> written;
  std::filesystem::path d(dir);
  if (auto st = write_file(d / "jobs.csv", jobs_csv(r), written); !st) return st.error();
  if (auto st = write_file(d / "summary.json", summary_json(r), written); !st) return st.error();
  if (auto st = write_plots(d, {&r}, written); !st) return st.error();
  return written;
}

Result<std::vector<std::string>> write_compare(const std::string& dir, const RunReport& a, const RunReport& b) {
  std::vector<std::string> written;
  for (const RunReport* r : {&a, &b}) {
    auto files = write_run((std::filesystem::path(dir) / to_lower(r->label)).string(), *r);
    if (!files) return files.error();
    written.insert(written.end(), files->begin(), files->end());
  }
  std::filesystem::path d(dir);
  if (auto st = write_file(d / "compare.json", compare_json(a, b), written); !st) return st.error();
  if (auto st = write_plots(d, {&a, &b}, written); !st) return st.error();
  return written;
}

}  // namespace drover::sim
