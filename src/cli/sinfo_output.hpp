// sinfo: options, grouping of nodes into lines, ordering and output, as
// Slurm 22.05's.
//
// Wiring: parse_sinfo_options(args, env) -> fetch partitions and nodes ->
// map them to PartitionView/NodeView -> render_sinfo(options, parts, nodes, now).
//
// Grouping (partition mode): a line is a set of nodes of one partition that
// agree on every displayed attribute that splits lines: the partition itself
// (%P %R and the partition's own attributes), node state (%t %T), features
// (%f %b), gres (%G and GresUsed), reason (%E %H %u %U), weight, version. CPU
// count, memory, disk and sockets/cores/threads do not split lines unless -e
// is given; they print as the minimum with a '+' when the nodes differ
// ("256000+"), CPU load and free memory as "min-max". When no partition field
// is displayed, lines merge across partitions and each node counts once.
// With -N every node of every partition is its own line.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/cli_error.hpp"
#include "cli/squeue_output.hpp"  // CommandOutput
#include "cli/views.hpp"

namespace drover::cli {

struct SinfoOptions {
  std::optional<std::string> format;       // -o / SINFO_FORMAT
  std::optional<std::string> format_long;  // -O
  std::optional<std::string> sort;         // -S / SINFO_SORT
  bool noheader = false;                   // -h
  bool json = false;                         // --json: Slurm's JSON document (filters and formats ignored)
  bool long_format = false;                // -l
  bool format_given = false;               // -o or -O on the command line (not SINFO_FORMAT)
  int iterate_s = 0;                       // -i N: print again every N seconds (0: once)
  bool node_oriented = false;              // -N
  bool summarize = false;                  // -s
  bool list_reasons = false;               // -R
  bool exact = false;                      // -e
  bool all = false;                        // -a: hidden partitions too
  bool responding_only = false;            // -r
  bool dead_only = false;                  // -d
  bool future = false;                     // --future: FUTURE nodes too
  bool reservations = false;               // -T: the reservations instead (Drover has none)
  std::vector<std::string> partitions;     // -p
  std::vector<std::string> nodes;          // -n (expanded)
  std::vector<std::string> states;         // -t (compact or long names, any case)
  std::string clusters;                    // -M: must name this cluster (or all)
  std::string cluster_banner;              // -M given: the cluster's name, for the CLUSTER: line
  bool print_version = false;
  bool print_help = false;
};

CliResult<SinfoOptions> parse_sinfo_options(const std::vector<std::string>& args,
                                            const std::map<std::string, std::string>& env);

// Partitions in configured order; nodes in any order (looked up by name);
// the advance reservations for -T.
CommandOutput render_sinfo(const SinfoOptions& opts, const std::vector<PartitionView>& partitions,
                           const std::vector<NodeView>& nodes, UnixTime now,
                           const std::vector<ReservationView>& reservations = {});
// sinfo -T's table ("No reservations in the system" when there are none).
std::string render_sinfo_reservations(const std::vector<ReservationView>& reservations, bool header);

}  // namespace drover::cli
