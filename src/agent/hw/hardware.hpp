// What a node really has: CPUs and their topology, memory, temporary disk and
// GPUs. Built from /sys, /proc and NVML (loaded at run time); needs nothing but
// libc and libstdc++, so that the standalone `drover-detect` can be linked from
// the same sources with a static libstdc++ and run on a machine that has none
// of Drover's libraries.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "common/result.hpp"

namespace drover::agent::hw {

// One GPU as the node sees it. `index` is the node-global index that
// CUDA_VISIBLE_DEVICES / SLURM_JOB_GPUS use (NVML order = PCI bus order).
struct GpuInfo {
  int index = 0;
  std::string name;         // model as the driver names it ("NVIDIA H100 80GB HBM3")
  std::string type;         // gres type derived from the name ("h100_80gb_hbm3"), or as declared
  int minor = -1;           // /dev/nvidiaN minor number; -1 unknown
  std::string device_file;  // "/dev/nvidia0"
  std::string uuid;
  std::string pci_bus_id;   // "00000000:18:00.0"
  int64_t memory_mb = 0;
  int numa_node = -1;       // from /sys/bus/pci/devices/<bus>/numa_node; -1 unknown
  std::string source;       // "nvml", "gres.conf" or "fake"
  // NVLink / Fabric Manager, where NVML reports them (SXM parts).
  int nvlinks_active = -1;       // -1: not supported / not queried
  std::string fabric_state;      // "", "not-supported", "not-started", "in-progress", "completed"
  std::string fabric_status;     // NVML's status text for the fabric probe ("" when n/a)
  std::string mig_mode;          // "", "enabled", "disabled"
};

struct NodeHardware {
  std::string hostname;
  int cpus = 0;               // online logical CPUs (Slurm's CPUs=)
  int boards = 1;
  int sockets = 0;
  int cores_per_socket = 0;
  int threads_per_core = 0;
  std::vector<int> online_cpu_ids;
  std::vector<int> usable_cpu_ids;  // this process's affinity mask
  int64_t real_memory_mb = 0;       // MemTotal in MiB (Slurm's RealMemory=)
  int64_t tmp_disk_mb = 0;          // size of the file system holding tmp_dir
  std::string tmp_dir = "/tmp";
  std::vector<GpuInfo> gpus;
  std::string gpu_source;           // "nvml", "gres.conf", "fake" or "none"
  std::string driver_version;       // NVML's driver version, "" when none
  std::string cuda_driver_version;  // "12.4", "" when none
  std::string nvml_status;          // "loaded libnvidia-ml.so.1 (NVML 12.550.54.15)" or why not
  // On an NVSwitch system (a GPU with a Fabric Manager state other than
  // not-supported): the installed nv-fabricmanager's version ("" unknown) and
  // what running `nv-fabricmanager --version` said when it gave none.
  bool fabric_managed = false;
  std::string fabric_manager_version;
  std::string fabric_manager_status;
  std::vector<std::string> notes;   // anything worth a human's attention
};

struct DetectOptions {
  // "h100:4", "h100:4,a100:2" or "4": emulated GPUs instead of NVML. Empty: real detection.
  std::string fake_gpus;
  // Directory that holds the emulated device files ("/tmp/fakegpu" -> /tmp/fakegpu/nvidia0...).
  std::string fake_gpu_dir = "/dev";
  // NVML library to load; tests point this at a path that does not exist.
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string tmp_dir = "/tmp";
  // Root of /sys and /proc, so tests can read a prepared tree.
  std::string sys_root = "/sys";
  std::string proc_root = "/proc";
  // The Fabric Manager binary asked for its version on an NVSwitch system.
  std::string fabric_manager = "nv-fabricmanager";
};

// Full detection. Never fails for a missing GPU stack: "no NVML here" is a
// status, not an error. Errors only for an unusable option (bad --fake-gpus).
Result<NodeHardware> detect_hardware(const DetectOptions& opts);

// Pieces, exposed for tests and for the agent's own use.
Status detect_cpus(const std::string& sys_root, NodeHardware& hw);
Status detect_memory(const std::string& proc_root, NodeHardware& hw);
// "h100:4,a100:2" -> 6 GpuInfo with source "fake", minors 0..5, files <dir>/nvidiaN.
Result<std::vector<GpuInfo>> parse_fake_gpus(std::string_view spec, const std::string& dir);
// Slurm-style gres type from a model name: "NVIDIA H100 80GB HBM3" -> "h100_80gb_hbm3".
std::string gres_type_from_name(std::string_view name);
// This machine's host name without the domain ("vm" for "vm.example.org").
std::string short_host_name();
// Linux CPU list syntax "0-3,8,10-11" -> ids; nullopt when malformed.
std::optional<std::vector<int>> parse_cpu_list(std::string_view s);

// What slurm.conf would say about this node, as `slurmd -C` prints it:
// "NodeName=gpu01 CPUs=128 Boards=1 SocketsPerBoard=2 CoresPerSocket=64 ThreadsPerCore=1
// RealMemory=1031891 Gres=gpu:h100_80gb_hbm3:8".
std::string slurm_conf_line(const NodeHardware& hw, const std::string& node_name);

// The seed's Fabric Manager pitfall: GPUs present but unusable because
// NVML says their Fabric Manager registration has not completed (not-started,
// in-progress) or failed; CUDA refuses them ("system not yet initialized")
// and NVLink is down. "" when every GPU is fine (or NVML does not support
// the question, as on PCIe GPUs); else a drain reason starting with
// kGpuHealthPrefix (common/node_reasons.hpp) that names the GPUs.
std::string gpu_health_problem(const NodeHardware& found);

// The JSON document `drover agent --detect` and `drover-detect` print.
nlohmann::json hardware_json(const NodeHardware& hw, const std::string& node_name);

}  // namespace drover::agent::hw
