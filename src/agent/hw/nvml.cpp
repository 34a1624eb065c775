#include "agent/hw/nvml.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "agent/hw/dl_library.hpp"
#include "agent/hw/nvml_api.hpp"

namespace drover::agent::hw {
namespace {

// The loaded library and the entry points Drover uses. Optional entry points
// (fabric, NVLink, MIG, PCI) may be missing on older drivers: they stay null.
class NvmlLib {
 public:
  explicit NvmlLib(const std::string& path) : lib_(path) {}
  ~NvmlLib() {
    if (initialised_ && shutdown_) shutdown_();
  }
  NvmlLib(const NvmlLib&) = delete;
  NvmlLib& operator=(const NvmlLib&) = delete;

  bool opened() const { return lib_.opened(); }

  template <class Fn>
  Fn sym(const char* name) const {
    return lib_.sym<Fn>(name);
  }

  // Resolves the required symbols and calls nvmlInit_v2; "" on success.
  std::string init() {
    auto init = sym<nvml::InitFn>("nvmlInit_v2");
    shutdown_ = sym<nvml::ShutdownFn>("nvmlShutdown");
    error_string_ = sym<nvml::ErrorStringFn>("nvmlErrorString");
    if (!init || !shutdown_) return "the library lacks nvmlInit_v2/nvmlShutdown";
    nvml::Return rc = init();
    if (rc != nvml::kSuccess) return "nvmlInit_v2 failed: " + error(rc);
    initialised_ = true;
    return "";
  }

  std::string error(nvml::Return rc) const {
    const char* s = error_string_ ? error_string_(rc) : nullptr;
    return s ? std::string(s) : "NVML error " + std::to_string(rc);
  }

 private:
  DlLibrary lib_;
  bool initialised_ = false;
  nvml::ShutdownFn shutdown_ = nullptr;
  nvml::ErrorStringFn error_string_ = nullptr;
};

std::string system_string(const NvmlLib& lib, const char* fn_name, unsigned size) {
  auto fn = lib.sym<nvml::SystemStringFn>(fn_name);
  if (!fn) return "";
  std::string buf(size, '\0');
  if (fn(buf.data(), size) != nvml::kSuccess) return "";
  return std::string(buf.c_str());
}

std::string device_string(const NvmlLib& lib, const char* fn_name, nvml::Device dev, unsigned size) {
  auto fn = lib.sym<nvml::DeviceStringFn>(fn_name);
  if (!fn) return "";
  std::string buf(size, '\0');
  if (fn(dev, buf.data(), size) != nvml::kSuccess) return "";
  return std::string(buf.c_str());
}

// "00000000:18:00.0" -> sysfs "0000:18:00.0" (lower case, 4-digit domain).
std::string sysfs_bus_id(const std::string& nvml_bus_id) {
  std::string s;
  for (char c : nvml_bus_id) s += static_cast<char>(c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);
  auto colon = s.find(':');
  if (colon != std::string::npos && colon > 4) s = s.substr(colon - 4);
  return s;
}

int read_numa_node(const std::string& sys_root, const std::string& bus_id) {
  std::ifstream in(sys_root + "/bus/pci/devices/" + sysfs_bus_id(bus_id) + "/numa_node");
  int node = -1;
  if (in >> node) return node;
  return -1;
}

const char* fabric_state_name(unsigned char state) {
  switch (state) {
    case 0: return "not-supported";
    case 1: return "not-started";
    case 2: return "in-progress";
    case 3: return "completed";
    default: return "unknown";
  }
}

void probe_links(const NvmlLib& lib, nvml::Device dev, GpuInfo& gpu) {
  if (auto fn = lib.sym<nvml::DeviceGetNvLinkStateFn>("nvmlDeviceGetNvLinkState")) {
    int active = 0;
    bool supported = false;
    for (unsigned link = 0; link < nvml::kNvlinkMaxLinks; ++link) {
      int is_active = 0;
      if (fn(dev, link, &is_active) != nvml::kSuccess) continue;
      supported = true;
      active += is_active ? 1 : 0;
    }
    gpu.nvlinks_active = supported ? active : -1;
  }
  if (auto fn = lib.sym<nvml::DeviceGetGpuFabricInfoFn>("nvmlDeviceGetGpuFabricInfo")) {
    nvml::GpuFabricInfo info{};
    nvml::Return rc = fn(dev, &info);
    if (rc == nvml::kSuccess) {
      gpu.fabric_state = fabric_state_name(info.state);
      gpu.fabric_status = info.status == nvml::kSuccess ? "success" : lib.error(info.status);
    } else if (rc == nvml::kErrorNotSupported) {
      gpu.fabric_state = "not-supported";
    } else {
      gpu.fabric_status = lib.error(rc);
    }
  }
}

GpuInfo probe_device(const NvmlLib& lib, unsigned index, nvml::Device dev, const std::string& sys_root) {
  GpuInfo gpu;
  gpu.index = static_cast<int>(index);
  gpu.source = "nvml";
  gpu.name = device_string(lib, "nvmlDeviceGetName", dev, nvml::kDeviceNameBufferSize);
  gpu.type = gres_type_from_name(gpu.name);
  gpu.uuid = device_string(lib, "nvmlDeviceGetUUID", dev, nvml::kDeviceUuidBufferSize);
  if (auto fn = lib.sym<nvml::DeviceUintFn>("nvmlDeviceGetMinorNumber")) {
    unsigned minor = 0;
    if (fn(dev, &minor) == nvml::kSuccess) {
      gpu.minor = static_cast<int>(minor);
      gpu.device_file = "/dev/nvidia" + std::to_string(minor);
    }
  }
  if (auto fn = lib.sym<nvml::DeviceGetMemoryInfoFn>("nvmlDeviceGetMemoryInfo")) {
    nvml::Memory mem{};
    if (fn(dev, &mem) == nvml::kSuccess) gpu.memory_mb = static_cast<int64_t>(mem.total >> 20);
  }
  if (auto fn = lib.sym<nvml::DeviceGetPciInfoFn>("nvmlDeviceGetPciInfo_v3")) {
    nvml::PciInfo pci{};
    if (fn(dev, &pci) == nvml::kSuccess) {
      gpu.pci_bus_id = std::string(pci.bus_id, strnlen(pci.bus_id, sizeof pci.bus_id));
      gpu.numa_node = read_numa_node(sys_root, gpu.pci_bus_id);
    }
  }
  if (auto fn = lib.sym<nvml::DeviceGetMigModeFn>("nvmlDeviceGetMigMode")) {
    unsigned current = 0, pending = 0;
    if (fn(dev, &current, &pending) == nvml::kSuccess) gpu.mig_mode = current ? "enabled" : "disabled";
  }
  probe_links(lib, dev, gpu);
  return gpu;
}

std::string cuda_version(const NvmlLib& lib) {
  auto fn = lib.sym<nvml::SystemIntFn>("nvmlSystemGetCudaDriverVersion_v2");
  if (!fn) fn = lib.sym<nvml::SystemIntFn>("nvmlSystemGetCudaDriverVersion");
  int v = 0;
  if (!fn || fn(&v) != nvml::kSuccess || v <= 0) return "";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace

NvmlProbe probe_nvml(const std::string& library, const std::string& sys_root) {
  NvmlProbe out;
  NvmlLib lib(library);
  if (!lib.opened()) {
    const char* why = dlerror();
    out.status = "no NVML here: cannot load " + library + (why ? std::string(" (") + why + ")" : "");
    return out;
  }
  if (std::string err = lib.init(); !err.empty()) {
    out.status = "no NVML here: " + library + " loaded but " + err;
    return out;
  }
  out.loaded = true;
  out.driver_version = system_string(lib, "nvmlSystemGetDriverVersion", nvml::kSystemDriverVersionBufferSize);
  out.cuda_driver_version = cuda_version(lib);
  std::string nvml_version = system_string(lib, "nvmlSystemGetNVMLVersion", nvml::kSystemNvmlVersionBufferSize);
  out.status = "loaded " + library + (nvml_version.empty() ? "" : " (NVML " + nvml_version + ")");

  auto get_count = lib.sym<nvml::DeviceGetCountFn>("nvmlDeviceGetCount_v2");
  auto get_handle = lib.sym<nvml::DeviceGetHandleByIndexFn>("nvmlDeviceGetHandleByIndex_v2");
  unsigned count = 0;
  nvml::Return rc = get_count ? get_count(&count) : nvml::kErrorFunctionNotFound;
  if (rc != nvml::kSuccess || !get_handle) {
    out.notes.push_back("NVML could not count GPUs: " + lib.error(rc));
    return out;
  }
  for (unsigned i = 0; i < count; ++i) {
    nvml::Device dev = nullptr;
    if (nvml::Return hrc = get_handle(i, &dev); hrc != nvml::kSuccess) {
      out.notes.push_back("GPU " + std::to_string(i) + ": " + lib.error(hrc));
      continue;
    }
    out.gpus.push_back(probe_device(lib, i, dev, sys_root));
  }
  return out;
}

}  // namespace drover::agent::hw
