// NVML through dlopen: the lab builds and runs on machines without the NVIDIA
// driver, and on machines with it reads the same UUIDs nvidia-smi -L shows.
#include <dlfcn.h>

#include <string>

#include "licensing/host_probe.hpp"

namespace licensing {

namespace {

// The few NVML entry points used, with their C signatures (nvml.h, NVML API v2).
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr unsigned kUuidBufferSize = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE

struct Library {
  void* handle = nullptr;
  ~Library() {
    if (handle) dlclose(handle);
  }
};

template <class Fn>
Fn symbol(void* lib, const char* name) {
  return reinterpret_cast<Fn>(dlsym(lib, name));
}

}  // namespace

GpuProbe probe_gpus_nvml() {
  GpuProbe g{{}, "NVML", ""};
  Library lib;
  lib.handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib.handle) {
    g.note = "libnvidia-ml.so.1 not found (no NVIDIA driver)";
    return g;
  }
  auto init = symbol<nvmlReturn_t (*)()>(lib.handle, "nvmlInit_v2");
  auto shutdown = symbol<nvmlReturn_t (*)()>(lib.handle, "nvmlShutdown");
  auto count = symbol<nvmlReturn_t (*)(unsigned*)>(lib.handle, "nvmlDeviceGetCount_v2");
  auto by_index = symbol<nvmlReturn_t (*)(unsigned, nvmlDevice_t*)>(lib.handle, "nvmlDeviceGetHandleByIndex_v2");
  auto uuid = symbol<nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned)>(lib.handle, "nvmlDeviceGetUUID");
  if (!init || !shutdown || !count || !by_index || !uuid) {
    g.note = "libnvidia-ml.so.1 lacks the NVML v2 entry points";
    return g;
  }
  if (const nvmlReturn_t rc = init(); rc != kNvmlSuccess) {
    g.note = "nvmlInit failed (NVML error " + std::to_string(rc) + ")";
    return g;
  }
  unsigned n = 0;
  if (count(&n) == kNvmlSuccess) {
    for (unsigned i = 0; i < n; ++i) {
      nvmlDevice_t dev = nullptr;
      char buf[kUuidBufferSize] = {};
      if (by_index(i, &dev) == kNvmlSuccess && uuid(dev, buf, sizeof buf) == kNvmlSuccess) {
        g.uuids.emplace_back(buf);
      }
    }
  }
  shutdown();
  if (g.uuids.empty()) g.note = "NVML reports no GPUs";
  return g;
}

}  // namespace licensing
