#include "agent/hw/cuda_probe.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "agent/hw/dl_library.hpp"

namespace drover::agent::hw {
namespace {

// The CUDA driver API entry points used, declared here (no cuda.h): CUresult
// is an int, CUdevice an int, CUcontext and CUdeviceptr opaque.
using CuResult = int;
using InitFn = CuResult (*)(unsigned);
using DriverVersionFn = CuResult (*)(int*);
using CountFn = CuResult (*)(int*);
using GetFn = CuResult (*)(int*, int);
using NameFn = CuResult (*)(char*, int, int);
using UuidFn = CuResult (*)(unsigned char*, int);
using TotalMemFn = CuResult (*)(std::size_t*, int);
using PciFn = CuResult (*)(char*, int, int);
using ErrorStringFn = CuResult (*)(CuResult, const char**);
using RetainFn = CuResult (*)(void**, int);
using ReleaseFn = CuResult (*)(int);
using SetCurrentFn = CuResult (*)(void*);
using MemAllocFn = CuResult (*)(unsigned long long*, std::size_t);
using MemFreeFn = CuResult (*)(unsigned long long);

class CudaLib : public DlLibrary {
 public:
  using DlLibrary::DlLibrary;
  std::string error(CuResult rc) const {
    const char* text = nullptr;
    if (auto fn = sym<ErrorStringFn>("cuGetErrorString"); fn && fn(rc, &text) == 0 && text) {
      return std::string(text) + " (CUDA error " + std::to_string(rc) + ")";
    }
    return "CUDA error " + std::to_string(rc);
  }
};

std::string uuid_text(const unsigned char* b) {
  char s[64];
  std::snprintf(s, sizeof s, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return s;
}

// Makes the device's primary context current and allocates 1 MiB in it: a
// device CUDA lists but the devices cgroup denies fails here.
std::string try_use(const CudaLib& lib, int dev) {
  auto retain = lib.sym<RetainFn>("cuDevicePrimaryCtxRetain");
  auto release = lib.sym<ReleaseFn>("cuDevicePrimaryCtxRelease_v2");
  if (!release) release = lib.sym<ReleaseFn>("cuDevicePrimaryCtxRelease");
  auto set_current = lib.sym<SetCurrentFn>("cuCtxSetCurrent");
  auto alloc = lib.sym<MemAllocFn>("cuMemAlloc_v2");
  auto free_fn = lib.sym<MemFreeFn>("cuMemFree_v2");
  if (!retain || !release || !set_current || !alloc || !free_fn) return "not tried: the driver lacks the context calls";
  void* ctx = nullptr;
  if (CuResult rc = retain(&ctx, dev); rc != 0) return "no context: " + lib.error(rc);
  std::string out;
  unsigned long long ptr = 0;
  if (CuResult rc = set_current(ctx); rc != 0) {
    out = "context not made current: " + lib.error(rc);
  } else if (CuResult rc2 = alloc(&ptr, std::size_t{1} << 20); rc2 != 0) {
    out = "cuMemAlloc of 1 MiB failed: " + lib.error(rc2);
  } else {
    free_fn(ptr);
    out = "ok: allocated and freed 1 MiB";
  }
  set_current(nullptr);
  release(dev);
  return out;
}

}  // namespace

CudaView probe_cuda(const std::string& library) {
  CudaView v;
  if (const char* env = std::getenv("CUDA_VISIBLE_DEVICES")) {
    v.visible_devices = env;
    v.visible_devices_set = true;
  }
  const std::string path = library.empty() ? "libcuda.so.1" : library;
  CudaLib lib(path);
  if (!lib.opened()) {
    const char* why = dlerror();
    v.status = "no CUDA driver here: cannot load " + path + (why ? std::string(" (") + why + ")" : "");
    return v;
  }
  auto init = lib.sym<InitFn>("cuInit");
  auto count = lib.sym<CountFn>("cuDeviceGetCount");
  auto get = lib.sym<GetFn>("cuDeviceGet");
  if (!init || !count || !get) {
    v.status = path + " lacks cuInit/cuDeviceGetCount/cuDeviceGet";
    return v;
  }
  if (auto ver = lib.sym<DriverVersionFn>("cuDriverGetVersion")) ver(&v.driver_version);
  if (CuResult rc = init(0); rc != 0) {
    v.status = "cuInit failed: " + lib.error(rc);
    return v;
  }
  v.loaded = true;
  int n = 0;
  if (CuResult rc = count(&n); rc != 0) {
    v.status = "cuDeviceGetCount failed: " + lib.error(rc);
    return v;
  }
  auto name_fn = lib.sym<NameFn>("cuDeviceGetName");
  auto uuid_fn = lib.sym<UuidFn>("cuDeviceGetUuid_v2");
  if (!uuid_fn) uuid_fn = lib.sym<UuidFn>("cuDeviceGetUuid");
  auto mem_fn = lib.sym<TotalMemFn>("cuDeviceTotalMem_v2");
  auto pci_fn = lib.sym<PciFn>("cuDeviceGetPCIBusId");
  for (int i = 0; i < n; ++i) {
    CudaDevice d;
    d.ordinal = i;
    int dev = 0;
    if (CuResult rc = get(&dev, i); rc != 0) {
      d.use = "cuDeviceGet failed: " + lib.error(rc);
      v.devices.push_back(d);
      continue;
    }
    char buf[256] = {};
    if (name_fn && name_fn(buf, sizeof buf, dev) == 0) d.name = buf;
    unsigned char u[16] = {};
    if (uuid_fn && uuid_fn(u, dev) == 0) d.uuid = uuid_text(u);
    std::size_t bytes = 0;
    if (mem_fn && mem_fn(&bytes, dev) == 0) d.memory_mb = bytes >> 20;
    char bus[64] = {};
    if (pci_fn && pci_fn(bus, sizeof bus, dev) == 0) d.pci_bus_id = bus;
    d.use = try_use(lib, dev);
    v.devices.push_back(d);
  }
  v.status = "ok";
  return v;
}

nlohmann::json cuda_json(const CudaView& v) {
  nlohmann::json devs = nlohmann::json::array();
  for (const auto& d : v.devices) {
    devs.push_back({{"ordinal", d.ordinal},
                    {"name", d.name},
                    {"uuid", d.uuid},
                    {"pci_bus_id", d.pci_bus_id},
                    {"memory_mb", d.memory_mb},
                    {"use", d.use}});
  }
  return {{"status", v.status},
          {"CUDA_VISIBLE_DEVICES", v.visible_devices_set ? nlohmann::json(v.visible_devices) : nlohmann::json()},
          {"driver_version", v.driver_version},
          {"device_count", v.devices.size()},
          {"devices", devs}};
}

}  // namespace drover::agent::hw
