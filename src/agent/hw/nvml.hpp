// GPUs through NVML, loaded at run time. "No NVML here" (library absent,
// driver not loaded, no GPU) is a normal outcome described in `status`.
#pragma once

#include <string>
#include <vector>

#include "agent/hw/hardware.hpp"

namespace drover::agent::hw {

struct NvmlProbe {
  bool loaded = false;            // the library was found and nvmlInit succeeded
  std::string status;             // human-readable: what was loaded, or why nothing was
  std::string driver_version;
  std::string cuda_driver_version;
  std::vector<GpuInfo> gpus;
  std::vector<std::string> notes;
};

// Opens `library` with dlopen, initialises NVML, lists every GPU, shuts NVML
// down and closes the library again.
NvmlProbe probe_nvml(const std::string& library, const std::string& sys_root);

}  // namespace drover::agent::hw
