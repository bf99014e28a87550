// How a CUDA lab's report shows the device it ran on: the same header line and JSON object in
// every lab, so runs from different labs on one machine read alike. Host C++ only (fmt and
// nlohmann::json), never included by a .cu file.
#pragma once

#include <string>

#include "gpulab/cuda/device_info.hpp"
#include "gpulab/json.hpp"

namespace gpulab::cuda {

// A CUDA version number as the runtime reports it (13000) in the usual form ("13.0").
std::string version_text(int version);

// "device   <name> (sm_90, 132 SMs), driver 13.0, runtime 13.0\n"
std::string device_line(const DeviceInfo& device);

// {"name", "compute_capability": "9.0", "sms", "driver": "13.0", "runtime": "13.0"}
gpulab::Json device_json(const DeviceInfo& device);

}  // namespace gpulab::cuda
