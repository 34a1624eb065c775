// sreport: Slurm 22.05's usage reports, computed from the controller's job
// history and its events (a node down or drained, the cluster's TRES).
//
// `reservation Utilization` lists each reservation that lasted into the
// window, whole: its TRES times its length, split into what its jobs used
// (Allocated) and the rest (Idle).
//
// Wiring: parse_sreport_options(args) -> sreport_window(opts, now) says which
// jobs to ask for (those that had not ended by its start) -> ReportData
// (jobs, events, the account tree, users' full names) -> render_sreport.
//
// What is counted, per hour of the window and per TRES (Slurm's rollup):
//   Reported   the cluster's TRES times the seconds it was registered
//              (ClusterEvent with no node: from the controller's first start
//              on its store; a controller that is down still counts, as in
//              Slurm without TrackSlurmctldDown)
//   Allocated  the jobs' allocated TRES times the seconds they ran, and the
//              reservations' TRES while they last (the jobs in them counted
//              with them, as Slurm bundles them; not those with IGNORE_JOBS,
//              nor MAINT ones, whose time is PLND Down)
//   Down       the down or drained nodes' TRES times the seconds they were so
//   PLND Down  the MAINT reservations' TRES while they last
//   Planned    (cpu only) what eligible pending jobs asked for, times the
//              seconds they waited, up to what was neither allocated nor down
//   Over Comm  the rest of that demand
//   Idle       Reported less all of the above
// Allocated, PLND Down, Down and Planned are capped in that order so that
// their sum never passes Reported (Slurm's "more allocated time than is
// possible"). Usage by account and
// user is the jobs' allocated TRES-seconds in the window.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_error.hpp"
#include "common/duration.hpp"

namespace drover::cli {

enum class ReportUnit { kSeconds, kMinutes, kHours, kPercent, kSecPer, kMinPer, kHourPer };

struct SreportOptions {
  bool noheader = false;   // -n
  bool parsable = false;   // -p
  bool parsable2 = false;  // -P
  bool quiet = false;      // -Q
  bool print_version = false;
  bool print_help = false;
  ReportUnit unit = ReportUnit::kMinutes;  // -t
  std::vector<std::string> tres{"cpu"};    // -T (lower case; "ALL" expanded by the renderer)
  bool tres_given = false;
  std::vector<std::string> clusters;       // -M, clusters=
  // The report: type "cluster", "user" or "job"; name its canonical spelling.
  std::string type, name;
  std::optional<std::string> start, end;   // start=, end=
  std::string format;                      // format=
  std::vector<std::string> accounts, users;
  std::vector<std::string> names;          // reservation Utilization: names=
  bool tree = false, group = false;
  bool print_job_count = false;  // job SizesByAccount printjobcount: jobs, not time
  int64_t top_count = 10;
  std::vector<int64_t> grouping{50, 250, 500, 1000};
  // What Slurm says and goes on with (an unknown condition, a bad time):
  // printed to stderr before the report; `exit_code` 1 after it.
  std::string warnings;
  int exit_code = 0;
};

// SREPORT_CLUSTER and SREPORT_TRES in `env` stand for -M and -T.
CliResult<SreportOptions> parse_sreport_options(const std::vector<std::string>& args,
                                                const std::map<std::string, std::string>& env = {});

// [start, end): whole hours. start= and end= round to the nearest hour; the
// defaults are yesterday's midnight and today's; an end past the last whole
// hour is that hour; an end not after the start is an hour after it.
struct ReportWindow {
  UnixTime start = 0, end = 0;
};
ReportWindow sreport_window(SreportOptions& opts, UnixTime now);

struct ReportJob {
  std::string account, user;
  UnixTime eligible = 0;  // 0: never eligible (held)
  UnixTime start = 0;     // 0: never started
  UnixTime end = 0;       // 0: still running or pending
  int64_t req_cpus = 0;
  std::map<std::string, int64_t> alloc_tres;  // cpu, mem (MiB), node, billing, gres/...
  std::string reservation;                    // the reservation it ran in ("" = none)
};

struct ReportEvent {
  std::string node;        // "" for the cluster's TRES (or a reservation's window)
  UnixTime start = 0, end = 0;  // end 0: still open
  std::map<std::string, int64_t> tres;
  // An advance reservation's window: its name, id, flags, nodes.
  std::string reservation;
  int64_t reservation_id = 0;
  std::string flags, nodes;
  bool cluster() const { return node.empty() && reservation.empty(); }
  bool flag(std::string_view f) const;
};

struct ReportAccount {
  std::string name, parent;  // parent "" for root
  std::vector<std::string> users;
};

struct ReportData {
  std::string cluster;
  UnixTime now = 0;
  std::vector<ReportJob> jobs;
  std::vector<ReportEvent> events;
  std::vector<ReportAccount> accounts;
  std::map<std::string, std::string> full_names;  // user -> the GECOS name
};

CommandOutput render_sreport(const SreportOptions& opts, const ReportWindow& w, const ReportData& data);

}  // namespace drover::cli
