#include "agent/device_filter.hpp"

#include <fcntl.h>
#include <linux/bpf.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/fd_io.hpp"

namespace drover::agent {
namespace {

constexpr uint8_t kR0 = 0, kR1 = 1, kR2 = 2, kR3 = 3, kR4 = 4;

BpfInsn load_u32(uint8_t dst, uint8_t src, int16_t off) {
  return {BPF_LDX | BPF_MEM | BPF_W, static_cast<uint8_t>(dst | (src << 4)), off, 0};
}
BpfInsn and32(uint8_t dst, int32_t imm) { return {BPF_ALU | BPF_AND | BPF_K, dst, 0, imm}; }
BpfInsn jne(uint8_t dst, int32_t imm, int16_t skip) { return {BPF_JMP | BPF_JNE | BPF_K, dst, skip, imm}; }
BpfInsn mov(uint8_t dst, int32_t imm) { return {BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, imm}; }
BpfInsn exit_insn() { return {BPF_JMP | BPF_EXIT, 0, 0, 0}; }

long bpf(int cmd, union bpf_attr* attr) { return syscall(__NR_bpf, cmd, attr, sizeof *attr); }

// Loads the program; the descriptor, or why the kernel refused it (with its
// verifier log when it gave one).
Result<Fd> load(const std::vector<BpfInsn>& prog) {
  static_assert(sizeof(BpfInsn) == sizeof(struct bpf_insn));
  static const char license[] = "Apache-2.0";
  char log[4096] = {};
  union bpf_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  attr.insns = reinterpret_cast<uint64_t>(prog.data());
  attr.insn_cnt = static_cast<uint32_t>(prog.size());
  attr.license = reinterpret_cast<uint64_t>(license);
  attr.log_buf = reinterpret_cast<uint64_t>(log);
  attr.log_size = sizeof log;
  attr.log_level = 1;
  long fd = bpf(BPF_PROG_LOAD, &attr);
  if (fd < 0 && errno == ENOSPC) {  // the log did not fit: load again without one
    attr.log_buf = 0;
    attr.log_size = 0;
    attr.log_level = 0;
    log[0] = '\0';
    fd = bpf(BPF_PROG_LOAD, &attr);
  }
  if (fd < 0) {
    const int e = errno;
    std::string msg = std::string("the kernel refused the device filter (BPF_PROG_LOAD): ") + std::strerror(e);
    if (e == EPERM) msg += " (loading it needs root, or CAP_BPF with CAP_SYS_ADMIN)";
    if (log[0]) msg += "; verifier: " + std::string(log);
    return make_error(msg);
  }
  return Fd(static_cast<int>(fd));
}

}  // namespace

Result<DeviceRule> device_rule(const std::string& file) {
  struct stat st {};
  if (stat(file.c_str(), &st) != 0) return make_error(file + ": " + std::strerror(errno));
  if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) return make_error(file + ": not a device file");
  return DeviceRule{S_ISCHR(st.st_mode) ? 'c' : 'b', major(st.st_rdev), minor(st.st_rdev), file};
}

std::vector<BpfInsn> device_filter_program(const std::vector<DeviceRule>& deny) {
  // r1 points at struct bpf_cgroup_dev_ctx {u32 access_type; u32 major; u32 minor;}
  // whose access_type holds the device type in its low 16 bits.
  std::vector<BpfInsn> p = {load_u32(kR2, kR1, 0), and32(kR2, 0xffff), load_u32(kR3, kR1, 4), load_u32(kR4, kR1, 8)};
  for (const DeviceRule& r : deny) {
    const int32_t type = r.type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR;
    // Each test skips to the next rule (past the rest of this one: 5 instructions in all).
    p.push_back(jne(kR2, type, 4));
    p.push_back(jne(kR3, static_cast<int32_t>(r.major), 3));
    p.push_back(jne(kR4, static_cast<int32_t>(r.minor), 2));
    p.push_back(mov(kR0, 0));
    p.push_back(exit_insn());
  }
  p.push_back(mov(kR0, 1));
  p.push_back(exit_insn());
  return p;
}

Status device_filter_available() {
  auto fd = load(device_filter_program({}));
  if (!fd) return fd.error();
  return {};
}

Status attach_device_filter(const std::string& cgroup_dir, const std::vector<DeviceRule>& deny) {
  auto prog = load(device_filter_program(deny));
  if (!prog) return prog.error();
  Fd dir(::open(cgroup_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir.get() < 0) return make_error("cannot open cgroup " + cgroup_dir + ": " + std::strerror(errno));
  union bpf_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.target_fd = static_cast<uint32_t>(dir.get());
  attr.attach_bpf_fd = static_cast<uint32_t>(prog->get());
  attr.attach_type = BPF_CGROUP_DEVICE;
  attr.attach_flags = BPF_F_ALLOW_MULTI;
  if (bpf(BPF_PROG_ATTACH, &attr) != 0) {
    return make_error("cannot attach the device filter to " + cgroup_dir + " (BPF_PROG_ATTACH): " +
                      std::strerror(errno));
  }
  return {};
}

}  // namespace drover::agent
