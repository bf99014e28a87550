// What --pitfall host-pointer prints: each call's answer (device.hpp's
// HostPointerRun) and which call first reported the fault, worked out from
// those answers.
#pragma once

#include <string>

#include "gpulab/json.hpp"
#include "kernels/device.hpp"

namespace kernels {

// The call that first returned an error ("cudaGetLastError() after the launch",
// "cudaDeviceSynchronize()", ...), or "" when none did.
std::string first_reporting_call(const HostPointerRun& r);

std::string render_host_pointer(const HostPointerRun& r);
gpulab::Json host_pointer_json(const HostPointerRun& r);

}  // namespace kernels
