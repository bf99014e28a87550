// The adapter from a backend the HAL core loaded (gpulab::hal::Backend) to the
// harness's Target. It goes through the core's typed wrappers — allocate,
// upload, the op, download — which is the path every routed call takes, so
// what passes here is what applications get.
#pragma once

#include <optional>

#include "conformance/target.hpp"
#include "hal/hal.hpp"

namespace conformance {

// The ABI's dtype bit for one of ours, and back.
gpulab::hal::DType to_hal(DType t);
std::optional<DType> from_hal(gpulab::hal::DType t);
// What a loaded backend declares, in the harness's terms.
BackendInfo info_of(const gpulab::hal::Backend& be);

class HalTarget : public Target {
 public:
  explicit HalTarget(const gpulab::hal::Backend& backend) : be_(backend), info_(info_of(backend)) {}
  [[nodiscard]] const BackendInfo& info() const override { return info_; }
  RunOutcome run(const Case& c, const std::vector<std::vector<std::uint8_t>>& inputs) override;
  std::optional<double> time_matmul(std::uint64_t m, std::uint64_t n, std::uint64_t k,
                                    int reps) override;

 private:
  RunOutcome run_buffer(const Case& c, const std::vector<std::uint8_t>& bytes);
  // rmsnorm, rope, silu_mul, paged_attention (HAL ABI 2.2).
  RunOutcome run_layer_op(const Case& c, const std::vector<std::vector<std::uint8_t>>& in);
  const gpulab::hal::Backend& be_;
  BackendInfo info_;
};

}  // namespace conformance
