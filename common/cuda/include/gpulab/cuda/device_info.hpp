// Device 0, opened once per program before anything is timed.
#pragma once

#include <string>

namespace gpulab::cuda {

struct DeviceInfo {
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int driver_version = 0;  // e.g. 13000 for CUDA 13.0
  int runtime_version = 0;
};

// Selects device 0 and creates its context now (the first CUDA call pays for
// it, and that must not land inside a timing). No driver, no device, or a
// build without a CUDA compiler: gpulab::Unsupported with the reason (exit 77).
DeviceInfo open_device();

}  // namespace gpulab::cuda
