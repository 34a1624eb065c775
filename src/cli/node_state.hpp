// Node states as sinfo and scontrol print them: a base state plus flags,
// shown long ("draining", "mixed"), compact ("drng", "mix") with Slurm's
// suffix characters ("idle*", "idle~"), or complete for scontrol
// ("MIXED+DRAIN", "DOWN*+DRAIN").
#pragma once

#include <cstdint>
#include <string>

namespace drover::cli {

enum class NodeBase { kUnknown, kDown, kIdle, kAllocated, kError, kMixed, kFuture };

struct NodeState {
  NodeBase base = NodeBase::kUnknown;
  bool drain = false;             // DRAIN flag: draining while busy, drained when idle
  bool completing = false;        // jobs are completing on the node
  bool not_responding = false;    // suffix '*'
  bool fail = false;              // FAIL flag: failing while busy
  bool maint = false;             // in a maintenance reservation (suffix '$')
  bool reserved = false;          // in an advanced reservation
  bool powered_down = false;      // suffix '~'
  bool powering_up = false;       // suffix '#'
  bool power_down_pending = false;  // suffix '!'
  bool powering_down = false;     // suffix '%'
  bool reboot_requested = false;  // suffix '@'
  bool reboot_issued = false;     // suffix '^'
  bool planned = false;           // held for a higher-priority job by backfill (suffix '-')
  bool invalid_reg = false;       // registered with less than configured (INVALID_REG)

  bool operator==(const NodeState&) const = default;
  // Busy: jobs are running or completing on it.
  bool busy() const { return base == NodeBase::kAllocated || base == NodeBase::kMixed || completing; }
  // Not available for new work and not busy counts as "other" in A/I/O/T.
  bool unavailable() const { return drain || fail || base == NodeBase::kDown || not_responding || base == NodeBase::kFuture; }
};

std::string node_state_long(const NodeState& s);     // sinfo %T: "draining", "idle*"
std::string node_state_compact(const NodeState& s);  // sinfo %t: "drng", "idle*"
std::string node_state_complete(const NodeState& s); // scontrol State=: "MIXED+DRAIN"
// Sort key for sinfo's "-t" (Slurm orders by its numeric state word: any
// flag sorts above every plain base state).
uint32_t node_state_sort_key(const NodeState& s);

}  // namespace drover::cli
