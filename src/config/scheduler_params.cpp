// SchedulerParameters=item[=value],... : the backfill and scheduling knobs,
// declared as data. Defaults are Slurm's except where Drover documents its
// own (bf_max_job_test, bf_reserve_depth, bf_interval=0).
#include "common/strings.hpp"
#include "config/key_values.hpp"
#include "config/line_apply.hpp"
#include "config/tables.hpp"

namespace drover::config {
namespace {

using S = SchedulerParams;
using namespace keys;

// Items Slurm documents that Drover accepts without acting on.
const char* const kPassiveItems[] = {
    "assoc_limit_stop", "batch_sched_delay", "bb_array_stage_cnt", "bf_busy_nodes", "bf_hetjob_immediate",
    "bf_hetjob_prio", "bf_job_part_count_reserve", "bf_licenses", "bf_max_job_array_resv",
    "bf_max_job_assoc", "bf_max_job_start", "bf_max_job_user_part", "bf_min_age_reserve",
    "bf_min_prio_reserve", "bf_node_space_size", "bf_one_resv_per_job", "bf_running_job_reserve",
    "bf_window_linear", "bf_yield_interval", "bf_yield_sleep", "build_queue_timeout",
    "correspond_after_task_cnt", "defer", "delay_boot", "disable_job_shrink", "disable_hetjob_steps",
    "enable_hetjob_steps", "Ignore_NUMA", "ignore_prefer_validation",
    "max_array_tasks", "max_rpc_cnt", "max_sched_time", "max_switch_wait",
    "no_backup_scheduling", "no_env_cache", "pack_serial_at_end",
    "partition_job_depth", "preempt_reorder_count", "preempt_strict_order", "preempt_youngest_first",
    "reduce_completing_frag", "requeue_setup_env_fail", "salloc_wait_nodes", "sbatch_wait_nodes",
    "sched_max_job_start", "sched_min_interval", "spec_cores_first", "step_retry_count",
    "step_retry_time", "whole_hetjob",
};

// A flag item: present means on; it takes no value.
KeyDef<S> flag(std::string name, bool S::*field, std::string doc) {
  KeyDef<S> d;
  d.name = std::move(name);
  d.values = "flag (no value)";
  d.doc = std::move(doc);
  d.parse = [field](S& s, std::string_view v, ValueContext&) -> Status {
    if (!v.empty()) return make_error("expected no value (it is a flag: write it alone)");
    s.*field = true;
    return {};
  };
  d.show = [field](const S& s) { return s.*field ? std::string("YES") : std::string("NO"); };
  return d;
}

// Integer items whose sentinel values are not "UNLIMITED": printed as plain numbers.
KeyDef<S> plain_int(std::string name, int64_t S::*field, int64_t min, int64_t max, std::string doc) {
  KeyDef<S> d = integer<S>(std::move(name), field, min, max, std::move(doc));
  d.show = [field](const S& s) { return std::to_string(s.*field); };
  return d;
}

KeyDef<S> bf_max_time() {
  KeyDef<S> d = plain_int("bf_max_time", &S::bf_max_time, 1, 3600,
                          "Most seconds one backfill pass may take; default: bf_interval.");
  d.show = [](const S& s) { return std::to_string(s.bf_max_time == -1 ? s.bf_interval : s.bf_max_time); };
  d.default_text = "bf_interval";
  return d;
}

std::vector<KeyDef<S>> make_items() {
  return key_defs<S>(
      plain_int("bf_interval", &S::bf_interval, -1, 10800,
                "Seconds between backfill passes; -1 disables backfill; 0 (Drover extension) backfills at every event."),
      integer<S>("bf_max_job_test", &S::bf_max_job_test, 1, 1000000,
                 "Most jobs one backfill pass considers. Drover's default is UNLIMITED (Slurm's is 500).", true),
      plain_int("bf_resolution", &S::bf_resolution, 1, 3600, "Seconds of resolution of the backfill plan."),
      plain_int("bf_window", &S::bf_window_minutes, 1, 43200, "Minutes into the future the backfill plan looks."),
      integer<S>("bf_reserve_depth", &S::bf_reserve_depth, 0, 1000000,
                 "Drover extension: how many blocked jobs get a reservation. 1 = EASY backfill; UNLIMITED = "
                 "conservative (every job); 0 = no reservations.",
                 true),
      flag("bf_continue", &S::bf_continue, "Continue a backfill pass after yielding instead of restarting it."),
      flag("nohold_on_prolog_fail", &S::nohold_on_prolog_fail,
           "A job whose Prolog failed goes back to the queue without a hold (by default it is held)."),
      flag("enable_user_top", &S::enable_user_top,
           "Let users run `scontrol top` on their own jobs (without it, only operators may)."),
      plain_int("bf_max_job_user", &S::bf_max_job_user, 0, 1000000,
                "Most jobs per user one backfill pass considers; 0: no cap."),
      plain_int("bf_max_job_part", &S::bf_max_job_part, 0, 1000000,
                "Most jobs per partition one backfill pass considers; 0: no cap."),
      bf_max_time(),
      plain_int("default_queue_depth", &S::default_queue_depth, 1, 1000000,
                "Jobs the quick scheduling pass tries at each event."),
      plain_int("sched_interval", &S::sched_interval, -1, 86400,
                "Seconds between full scheduling passes; -1 disables them."),
      plain_int("max_script_size", &S::max_script_size, 0, 536870912,
                "Largest batch script, in bytes, a submission may carry (default 4194304, 4 MiB, as Slurm's); a "
                "larger one is refused.")
  );
}

// Splits "a=1,b,c=2" and applies each item; a bad item is an error (the key
// stays unset), an unknown item a warning.
Status parse_items(SchedulerParams& out, std::string_view s, ValueContext& ctx) {
  const auto& table = scheduler_parameter_keys();
  SchedulerParams p;
  int offset = 0;  // of the item in the value, for its column
  for (const auto& item : split(s, ',')) {
    SourceLoc item_loc = ctx.value_loc;
    if (item_loc.column > 0) item_loc.column += offset;
    offset += static_cast<int>(item.size()) + 1;
    if (item.empty()) continue;
    auto eq = item.find('=');
    std::string name = item.substr(0, eq == std::string::npos ? item.size() : eq);
    std::string value = eq == std::string::npos ? std::string() : item.substr(eq + 1);
    p.raw[to_lower(name)] = value;
    if (const auto* def = table.find(name)) {
      if (auto st = def->parse(p, value, ctx); !st) {
        return make_error("bad item \"" + item + "\": " + def->name + " " + st.error().message);
      }
      continue;
    }
    if (table.find_passive(name)) continue;
    auto guess = nearest_key(name, table.spellings());
    ctx.diags.add(Severity::kWarning, "unknown-scheduler-parameter", item_loc, ctx.key,
                  "unknown SchedulerParameters item \"" + name + "\" (ignored)" +
                      (guess ? "; did you mean " + *guess + "?" : std::string("")),
                  "correct or remove it; `drover config reference` lists the items Drover knows");
  }
  out = std::move(p);
  return {};
}

}  // namespace

const KeyTable<SchedulerParams>& scheduler_parameter_keys() {
  // Never destroyed: a command would otherwise spend its exit taking it apart.
  static const KeyTable<SchedulerParams>& table =
      *new KeyTable<SchedulerParams>("SchedulerParameters", make_items(), passive_keys(kPassiveItems));
  return table;
}

std::string show_scheduler_parameters(const SchedulerParams& p) {
  std::vector<std::string> items;
  for (const auto& def : scheduler_parameter_keys().keys()) {
    std::string v = def.show(p);
    if (def.values == "flag (no value)") {
      if (v == "YES") items.push_back(def.name);
      continue;
    }
    items.push_back(def.name + "=" + v);
  }
  return join(items, ",");
}

KeyDef<ClusterConfig> scheduler_parameters_key() {
  KeyDef<ClusterConfig> d;
  d.name = "SchedulerParameters";
  d.values = "comma-separated items (see the SchedulerParameters table)";
  d.doc = "Backfill and scheduling knobs; unknown items are warnings.";
  d.parse = [](ClusterConfig& c, std::string_view s, ValueContext& ctx) { return parse_items(c.sched, s, ctx); };
  d.show = [](const ClusterConfig& c) { return show_scheduler_parameters(c.sched); };
  return d;
}

}  // namespace drover::config
