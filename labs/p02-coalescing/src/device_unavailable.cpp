// The device back end of a build without a CUDA compiler: every entry point
// reports the missing capability, so the program exits 77 with the reason.
#include <gpulab/errors.hpp>

#include "coalescing/device.hpp"

namespace coalescing {
namespace {

[[noreturn]] void unavailable() {
  throw gpulab::Unsupported(
      "no CUDA device (this build has no CUDA compiler; install the CUDA Toolkit and reconfigure)");
}

}  // namespace

Measured run_strided_copy(std::size_t, int, const Plan&) {
  unavailable();
}
Measured run_float4_copy(std::size_t, const Plan&) {
  unavailable();
}
Measured run_field_sum(Layout, std::size_t, const Plan&) {
  unavailable();
}
Measured run_transpose(Transpose, int, const Plan&) {
  unavailable();
}

}  // namespace coalescing
