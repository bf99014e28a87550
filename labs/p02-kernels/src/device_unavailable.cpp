// The device back end of a build without a CUDA compiler: every entry point
// reports the missing capability, so the program exits 77 with the reason.
#include <gpulab/errors.hpp>

#include "kernels/device.hpp"

namespace kernels {
namespace {

[[noreturn]] void unavailable() {
  throw gpulab::Unsupported(
      "no CUDA device (this build has no CUDA compiler; install the CUDA Toolkit and reconfigure)");
}

}  // namespace

TimedRun run_copy(std::size_t, const TimingPlan&) {
  unavailable();
}
TimedRun run_vec_add(const std::vector<float>&, const std::vector<float>&, std::size_t, float, bool,
                     const TimingPlan&) {
  unavailable();
}
TimedRun run_matmul(MatmulKernel, const std::vector<float>&, const std::vector<float>&, int,
                    const TimingPlan&, const MatmulOptions&) {
  unavailable();
}
KernelResources matmul_resources(MatmulKernel) {
  unavailable();
}
HostPointerRun run_host_pointer_pitfall(std::size_t) {
  unavailable();
}

}  // namespace kernels
