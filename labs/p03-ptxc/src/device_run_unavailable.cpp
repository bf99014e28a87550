// Built instead of device_run.cpp when the CUDA headers are missing: the
// real-hardware check cannot exist, and says so (exit 77), rather than pretend.
#include <gpulab/errors.hpp>

#include "ptxc/device_run.hpp"

namespace ptxc {

bool device_path_built() {
  return false;
}

DeviceRun run_on_device(const std::string&, const std::string&, const std::vector<Param>&,
                        const KernelInputs&, int, int) {
  throw gpulab::Unsupported(
      "ptxc was built without the CUDA driver API headers (cuda.h); install the CUDA Toolkit");
}

}  // namespace ptxc
