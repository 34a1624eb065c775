// GPU isolation on cgroup v2. The v2 tree has no devices controller: the
// kernel asks a BPF program of type BPF_PROG_TYPE_CGROUP_DEVICE, attached to
// a cgroup, whether a process in it may open (or mknod) a device. Drover
// builds that program itself (a few instructions per device denied, no
// compiler or libbpf needed) and attaches it to a step's cgroup, so the
// step's processes cannot open the node's GPUs they were not given, as the
// v1 devices controller's devices.deny does.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.hpp"

namespace drover::agent {

struct DeviceRule {
  char type = 'c';  // 'c' character or 'b' block device
  uint32_t major = 0;
  uint32_t minor = 0;
  std::string file;  // the device file it came from, for messages
};

// The rule for a device file (stat: its type, major and minor number).
Result<DeviceRule> device_rule(const std::string& file);

// One eBPF instruction, as the kernel reads it (struct bpf_insn).
struct BpfInsn {
  uint8_t code;
  uint8_t regs;  // dst_reg in the low 4 bits, src_reg in the high 4
  int16_t off;
  int32_t imm;
};

// The program: denies every access to each device in `deny` (returns 0) and
// allows everything else (returns 1).
std::vector<BpfInsn> device_filter_program(const std::vector<DeviceRule>& deny);

// Whether this host lets the agent load such a program (kernel support and
// privileges): loads one that allows everything and closes it.
Status device_filter_available();

// Loads the program for `deny` and attaches it to the cgroup v2 directory
// `cgroup_dir` (BPF_F_ALLOW_MULTI: it runs with those of the cgroups above,
// e.g. systemd's, and every one must allow). It stays attached until the
// cgroup is removed.
Status attach_device_filter(const std::string& cgroup_dir, const std::vector<DeviceRule>& deny);

}  // namespace drover::agent
