// open_device() in a build without a CUDA compiler: the program exits 77 with
// the reason, so a test or a learner sees "skipped", not a crash.
#include "gpulab/cuda/check.hpp"
#include "gpulab/cuda/device_info.hpp"

namespace gpulab::cuda {

DeviceInfo open_device() {
  throw_no_device("this build has no CUDA compiler; install the CUDA Toolkit and reconfigure");
}

}  // namespace gpulab::cuda
