// The real-hardware check (curriculum extension 5): load ptxc's PTX text with
// the CUDA driver API (cuModuleLoadData JIT-compiles it for the GPU), launch it
// with cuLaunchKernel on the same inputs the interpreter used, and copy the
// buffers back. libcuda is opened at run time (dlopen), so ptxc starts and
// works on machines without a driver; there this path reports Unsupported.
#pragma once

#include <string>
#include <vector>

#include "ptxc/ast.hpp"
#include "ptxc/differential.hpp"

namespace ptxc {

struct DeviceRun {
  std::vector<std::vector<float>> buffers;  // like PtxRun::buffers
  std::string device;                       // "NVIDIA H200 (sm_90)"
};

// False when ptxc was built without the CUDA headers (then run_on_device throws).
bool device_path_built();

// Throws gpulab::Unsupported without a driver or a GPU, gpulab::RunError when
// the driver rejects the PTX or the launch fails (with the driver's message).
DeviceRun run_on_device(const std::string& ptx, const std::string& entry,
                        const std::vector<Param>& params, const KernelInputs& inputs, int n,
                        int block);

}  // namespace ptxc
