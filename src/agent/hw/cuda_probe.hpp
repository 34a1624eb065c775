// What a CUDA program started here sees: the CUDA driver (libcuda.so.1,
// loaded at run time like NVML) initialised under this process's
// environment, so CUDA_VISIBLE_DEVICES and the devices cgroup apply exactly
// as they do to a job's program. `drover-detect --cuda` prints it; a job
// runs it to check that it was bound to the GPUs it was given.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace drover::agent::hw {

struct CudaDevice {
  int ordinal = 0;          // CUDA's own numbering, after CUDA_VISIBLE_DEVICES
  std::string name;         // "NVIDIA H200"
  std::string uuid;         // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as nvidia-smi prints it
  std::string pci_bus_id;   // "0000:18:00.0"
  uint64_t memory_mb = 0;
  std::string use;          // "ok: allocated and freed 1 MiB" or why a context could not be made
};

struct CudaView {
  bool loaded = false;      // libcuda could be loaded and cuInit succeeded
  std::string status;       // "ok" or why not
  std::string visible_devices;  // CUDA_VISIBLE_DEVICES as this process has it
  bool visible_devices_set = false;
  int driver_version = 0;   // cuDriverGetVersion: 13000 is CUDA 13.0
  std::vector<CudaDevice> devices;
};

// Loads `library` (default libcuda.so.1), initialises it and lists the devices
// it offers, making a context on each and allocating 1 MiB in it.
CudaView probe_cuda(const std::string& library = "");

nlohmann::json cuda_json(const CudaView& v);

}  // namespace drover::agent::hw
