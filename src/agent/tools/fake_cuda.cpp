// A stand-in libcuda for the agent's tests: two H100s, numbered through
// CUDA_VISIBLE_DEVICES as the real driver numbers them (indices only). The
// second one refuses a context. Exercises the dlopen path of
// `drover-detect --cuda` on machines without a GPU; never installed.
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {
std::vector<int> g_visible;
bool g_init = false;
}  // namespace

extern "C" {
int cuDriverGetVersion(int* v) { *v = 12040; return 0; }
int cuInit(unsigned) {
  g_visible.clear();
  const char* env = std::getenv("CUDA_VISIBLE_DEVICES");
  std::string s = env ? env : "0,1";
  std::size_t start = 0;
  while (start < s.size()) {
    std::size_t comma = s.find(',', start);
    std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item != "0" && item != "1") break;  // the real driver stops at the first invalid entry
    g_visible.push_back(item[0] - '0');
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  g_init = true;
  return 0;
}
int cuDeviceGetCount(int* n) { *n = g_init ? static_cast<int>(g_visible.size()) : 0; return g_init ? 0 : 3; }
int cuDeviceGet(int* dev, int ordinal) {
  if (ordinal < 0 || ordinal >= static_cast<int>(g_visible.size())) return 101;  // CUDA_ERROR_INVALID_DEVICE
  *dev = g_visible[ordinal];
  return 0;
}
int cuDeviceGetName(char* buf, int len, int) { std::strncpy(buf, "NVIDIA H100 80GB HBM3", len); return 0; }
int cuDeviceGetUuid_v2(unsigned char* u, int dev) {
  for (int i = 0; i < 16; ++i) u[i] = static_cast<unsigned char>(dev * 0x11);
  return 0;
}
int cuDeviceTotalMem_v2(std::size_t* bytes, int) { *bytes = std::size_t{81559} << 20; return 0; }
int cuDeviceGetPCIBusId(char* buf, int len, int dev) {
  std::strncpy(buf, dev == 0 ? "0000:18:00.0" : "0000:2A:00.0", len);
  return 0;
}
int cuGetErrorString(int rc, const char** s) {
  *s = rc == 999 ? "unknown error" : "invalid device ordinal";
  return 0;
}
int cuDevicePrimaryCtxRetain(void** ctx, int dev) {
  static int token;
  if (dev == 1) return 999;
  *ctx = &token;
  return 0;
}
int cuDevicePrimaryCtxRelease_v2(int) { return 0; }
int cuCtxSetCurrent(void*) { return 0; }
int cuMemAlloc_v2(unsigned long long* p, std::size_t) { *p = 0x1000; return 0; }
int cuMemFree_v2(unsigned long long) { return 0; }
}
