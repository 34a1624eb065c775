// A stand-in libnvidia-ml for the agent's tests: two H100s, the second one not
// yet registered with Fabric Manager. Exercises the dlopen path of detection
// on machines without a GPU; never installed.
#include <cstdlib>
#include <cstring>

extern "C" {
struct FakeDevice {
  int index;
};
static FakeDevice g_devices[2] = {{0}, {1}};
static int g_initialised = 0;

static int copy(char* dst, unsigned len, const char* src) {
  if (std::strlen(src) + 1 > len) return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  std::strcpy(dst, src);
  return 0;
}

int nvmlInit_v2() { g_initialised = 1; return 0; }
int nvmlShutdown() { g_initialised = 0; return 0; }
const char* nvmlErrorString(int rc) { return rc == 3 ? "Not Supported" : "Unknown Error"; }
int nvmlSystemGetDriverVersion(char* buf, unsigned len) { return copy(buf, len, "550.54.15"); }
int nvmlSystemGetNVMLVersion(char* buf, unsigned len) { return copy(buf, len, "12.550.54.15"); }
int nvmlSystemGetCudaDriverVersion_v2(int* v) { *v = 12040; return 0; }
int nvmlDeviceGetCount_v2(unsigned* n) { *n = g_initialised ? 2 : 0; return g_initialised ? 0 : 1; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, FakeDevice** d) {
  if (i >= 2) return 2;
  *d = &g_devices[i];
  return 0;
}
int nvmlDeviceGetName(FakeDevice*, char* buf, unsigned len) { return copy(buf, len, "NVIDIA H100 80GB HBM3"); }
int nvmlDeviceGetUUID(FakeDevice* d, char* buf, unsigned len) {
  return copy(buf, len, d->index == 0 ? "GPU-00000000-fake-0000-0000-000000000000" : "GPU-11111111-fake-0000-0000-000000000000");
}
int nvmlDeviceGetMinorNumber(FakeDevice* d, unsigned* m) { *m = 4 + d->index; return 0; }
struct Mem { unsigned long long total, free, used; };
int nvmlDeviceGetMemoryInfo(FakeDevice*, Mem* m) { m->total = 81559ull << 20; m->free = m->total; m->used = 0; return 0; }
struct Pci { char legacy[16]; unsigned domain, bus, device, id, sub; char bus_id[32]; };
int nvmlDeviceGetPciInfo_v3(FakeDevice* d, Pci* p) {
  std::memset(p, 0, sizeof *p);
  std::strcpy(p->bus_id, d->index == 0 ? "00000000:18:00.0" : "00000000:2A:00.0");
  return 0;
}
int nvmlDeviceGetNvLinkState(FakeDevice* d, unsigned link, int* active) {
  if (link >= 18) return 2;
  *active = d->index == 0 ? 1 : (link < 4 ? 1 : 0);
  return 0;
}
struct Fabric { unsigned char uuid[16]; int status; unsigned clique; unsigned char state; };
int nvmlDeviceGetGpuFabricInfo(FakeDevice* d, Fabric* f) {
  std::memset(f, 0, sizeof *f);
  // DROVER_FAKE_NVML_REGISTERED=1: both registered (a healthy node, for rehearsals).
  const char* all = std::getenv("DROVER_FAKE_NVML_REGISTERED");
  f->state = d->index == 0 || (all && *all == '1') ? 3 : 1;
  return 0;
}
int nvmlDeviceGetMigMode(FakeDevice*, unsigned* cur, unsigned* pending) { *cur = 0; *pending = 0; return 0; }
}
