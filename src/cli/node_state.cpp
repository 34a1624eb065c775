#include "cli/node_state.hpp"

#include "common/strings.hpp"

namespace drover::cli {
namespace {

// A maintenance reservation names an idle node's state ("maint"); a busy
// one keeps its base word with '$' ("mix$"), as Slurm 22.05 shows them.
bool maint_word(const NodeState& s) {
  return s.maint && !s.busy() && !s.drain && !s.fail && s.base != NodeBase::kDown;
}

std::string suffixes(const NodeState& s) {
  std::string out;
  if (s.not_responding) out += '*';
  if (s.powered_down) out += '~';
  if (s.powering_up) out += '#';
  if (s.power_down_pending) out += '!';
  if (s.powering_down) out += '%';
  if (s.maint && !maint_word(s)) out += '$';
  if (s.reboot_requested) out += '@';
  if (s.reboot_issued) out += '^';
  if (s.planned) out += '-';
  return out;
}

const char* base_upper(const NodeState& s) {
  switch (s.base) {
    case NodeBase::kDown: return "DOWN";
    case NodeBase::kIdle: return s.completing ? "COMPLETING" : "IDLE";
    case NodeBase::kAllocated: return s.completing ? "ALLOCATED+" : "ALLOCATED";
    case NodeBase::kError: return "ERROR";
    case NodeBase::kMixed: return "MIXED";
    case NodeBase::kFuture: return "FUTURE";
    case NodeBase::kUnknown: break;
  }
  return "UNKNOWN";
}

const char* base_compact(const NodeState& s) {
  switch (s.base) {
    case NodeBase::kDown: return "down";
    case NodeBase::kIdle: return s.completing ? "comp" : "idle";
    case NodeBase::kAllocated: return s.completing ? "comp" : "alloc";
    case NodeBase::kError: return "err";
    case NodeBase::kMixed: return "mix";
    case NodeBase::kFuture: return "futr";
    case NodeBase::kUnknown: break;
  }
  return "unk";
}

// The word that replaces the base state when a flag dominates, as Slurm's
// node_state_string does (drain/fail over busy/idle, then reservations).
const char* dominant_long(const NodeState& s) {
  if (s.invalid_reg) return "INVAL";
  if (s.drain) return s.busy() ? "DRAINING" : "DRAINED";
  if (s.fail) return s.busy() ? "FAILING" : "FAIL";
  if (s.reboot_issued) return "REBOOT_ISSUED";
  if (s.reboot_requested) return "REBOOT_REQUESTED";
  if (s.powering_down) return "POWERING_DOWN";
  if (s.powered_down) return "POWERED_DOWN";
  if (s.power_down_pending) return "POWER_DOWN";
  if (s.powering_up) return "POWERING_UP";
  if (maint_word(s)) return "MAINT";
  // A reserved node that does not respond is its base word with '*'
  // (the anchor's Slurm 22.05: idle*, not reserved*).
  if (s.reserved && !s.maint && !s.not_responding) return "RESERVED";
  if (s.planned) return "PLANNED";
  return nullptr;
}

const char* dominant_compact(const NodeState& s) {
  if (s.invalid_reg) return "inval";
  if (s.drain) return s.busy() ? "drng" : "drain";
  if (s.fail) return s.busy() ? "failg" : "fail";
  if (s.reboot_issued || s.reboot_requested) return "boot";
  if (s.powered_down || s.powering_down || s.power_down_pending) return "idle";
  if (s.powering_up) return "pow_up";
  if (maint_word(s)) return "maint";
  if (s.reserved && !s.maint && !s.not_responding) return "resv";
  if (s.planned) return "plnd";
  return nullptr;
}

}  // namespace

std::string node_state_long(const NodeState& s) {
  const char* word = dominant_long(s);
  return to_lower(word ? word : base_upper(s)) + suffixes(s);
}

std::string node_state_compact(const NodeState& s) {
  const char* word = dominant_compact(s);
  return std::string(word ? word : base_compact(s)) + suffixes(s);
}

std::string node_state_complete(const NodeState& s) {
  std::string out = s.base == NodeBase::kIdle || s.base == NodeBase::kAllocated
                        ? std::string(s.base == NodeBase::kIdle ? "IDLE" : "ALLOCATED")
                        : std::string(base_upper(s));
  // NOT_RESPONDING is a flag here, after the others (the anchor's Slurm
  // 22.05: IDLE+DRAIN+NOT_RESPONDING, IDLE+RESERVED+NOT_RESPONDING,
  // IDLE+COMPLETING+NOT_RESPONDING), not sinfo's '*'.
  const std::pair<bool, const char*> flags[] = {
      {s.completing, "COMPLETING"},   {s.drain, "DRAIN"},
      {s.fail, "FAIL"},               {s.invalid_reg, "INVALID_REG"},
      {s.maint, "MAINTENANCE"},       {s.planned, "PLANNED"},
      {s.power_down_pending, "POWER_DOWN"}, {s.powered_down, "POWERED_DOWN"},
      {s.powering_down, "POWERING_DOWN"}, {s.powering_up, "POWERING_UP"},
      {s.reboot_issued, "REBOOT_ISSUED"}, {s.reboot_requested, "REBOOT_REQUESTED"},
      {s.reserved, "RESERVED"},           {s.not_responding, "NOT_RESPONDING"},
  };
  for (const auto& [on, name] : flags) {
    if (on) {
      out += '+';
      out += name;
    }
  }
  return out;
}

uint32_t node_state_sort_key(const NodeState& s) {
  // Slurm's bit values: base in the low nibble, flags above.
  uint32_t key = static_cast<uint32_t>(s.base);
  const std::pair<bool, uint32_t> bits[] = {
      {s.reserved, 0x20},         {s.drain, 0x200},           {s.completing, 0x400},
      {s.not_responding, 0x800},  {s.powered_down, 0x1000},   {s.fail, 0x2000},
      {s.powering_up, 0x4000},    {s.maint, 0x8000},          {s.reboot_requested, 0x10000},
      {s.powering_down, 0x40000}, {s.reboot_issued, 0x100000}, {s.planned, 0x200000},
      {s.invalid_reg, 0x400000},  {s.power_down_pending, 0x800000},
  };
  for (const auto& [on, bit] : bits)
    if (on) key |= bit;
  return key;
}

}  // namespace drover::cli
