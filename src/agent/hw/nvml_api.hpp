// The few NVML types and entry points Drover calls, declared here from
// NVIDIA's public NVML API reference so that Drover needs neither nvml.h
// (non-free in Debian) nor a link dependency: libnvidia-ml.so.1 is opened with
// dlopen() at run time and every symbol is looked up by name. Layouts below
// are those of the documented ABI; only fixed-size, long-stable structures are
// used.
#pragma once

namespace drover::agent::hw::nvml {

using Return = int;  // nvmlReturn_t
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorFunctionNotFound = 13;

struct DeviceSt;
using Device = DeviceSt*;  // nvmlDevice_t

inline constexpr unsigned kDeviceNameBufferSize = 96;      // NVML_DEVICE_NAME_V2_BUFFER_SIZE
inline constexpr unsigned kDeviceUuidBufferSize = 80;      // NVML_DEVICE_UUID_V2_BUFFER_SIZE
inline constexpr unsigned kSystemDriverVersionBufferSize = 80;
inline constexpr unsigned kSystemNvmlVersionBufferSize = 80;
inline constexpr unsigned kNvlinkMaxLinks = 18;            // NVML_NVLINK_MAX_LINKS

struct Memory {  // nvmlMemory_t
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct PciInfo {  // nvmlPciInfo_t (v3)
  char bus_id_legacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;
  unsigned int pci_sub_system_id;
  char bus_id[32];
};

// nvmlGpuFabricInfo_t: the GPU's registration with Fabric Manager (NVSwitch systems).
struct GpuFabricInfo {
  unsigned char cluster_uuid[16];
  Return status;
  unsigned int clique_id;
  unsigned char state;  // 0 not supported, 1 not started, 2 in progress, 3 completed
};

using InitFn = Return (*)();
using ShutdownFn = Return (*)();
using ErrorStringFn = const char* (*)(Return);
using SystemStringFn = Return (*)(char*, unsigned int);
using SystemIntFn = Return (*)(int*);
using DeviceGetCountFn = Return (*)(unsigned int*);
using DeviceGetHandleByIndexFn = Return (*)(unsigned int, Device*);
using DeviceStringFn = Return (*)(Device, char*, unsigned int);
using DeviceUintFn = Return (*)(Device, unsigned int*);
using DeviceGetMemoryInfoFn = Return (*)(Device, Memory*);
using DeviceGetPciInfoFn = Return (*)(Device, PciInfo*);
using DeviceGetNvLinkStateFn = Return (*)(Device, unsigned int, int*);
using DeviceGetGpuFabricInfoFn = Return (*)(Device, GpuFabricInfo*);
using DeviceGetMigModeFn = Return (*)(Device, unsigned int*, unsigned int*);

}  // namespace drover::agent::hw::nvml
