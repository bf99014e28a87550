// What an agent offers: its devices, from --devices or from the HAL backends
// that load here, each certified (or not) by a conformance run at start — a
// backend that hal-conformance did not pass for F32 matmul is not offered for
// F32 jobs (the scheduler reads Device::dtypes).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "platform/model.hpp"

namespace platform {

// "cpu_ref:2,fast:1" -> cpu_ref:0, cpu_ref:1, fast:0. Throws gpulab::UsageError
// naming the bad item. "auto" is resolved by discover_devices().
std::vector<Device> parse_device_spec(std::string_view spec);

// One device per HAL backend that loads and can run here (cpu_ref, fast, blas,
// opencl; cuda only with a GPU).
std::vector<Device> discover_devices();

struct Certification {
  std::string backend;
  bool loaded = false;
  bool certified = false;
  std::string detail;  // "8/8 F32 matmul cases" or why not
};

// Runs conformance's F32 matmul cases on every backend the devices use and
// fills each device's dtypes with "f32" where it passed.
std::vector<Certification> certify(std::vector<Device>& devices);

}  // namespace platform
