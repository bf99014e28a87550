// The curriculum's Lab 01 walkthrough as data (hal-demo prints it): every
// loaded backend's FP32 matmul conformance, every other declared dtype tested
// (a backend that fails a declared dtype is quarantined: out of routing), and
// routing decisions for FP32, FP16, BF16 and FP8 matmul plus FP32 softmax;
// and the ABI 2.2 decoder-layer ops in FP32 on every backend that has them,
// routed too (a paged-attention batch of 3 sequences, grouped KV heads).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hal/check.hpp"
#include "hal/registry.hpp"

namespace gpulab::hal {

struct WalkthroughOptions {
  std::uint64_t m = 61, n = 47, k = 35;  // odd on purpose: no tile divides them
  std::uint64_t seed = 1;
  bool gate = true;  // quarantine backends that fail a declared dtype before routing
};

struct DTypeCheck {
  DType dtype;
  CheckResult matmul;
  CheckResult softmax;  // declared == false when the backend has no softmax
};

struct LayerOpCheck {
  Op op;
  CheckResult result;  // declared == false for a backend without the op (ABI < 2.2)
};

struct BackendReport {
  std::string name;
  CheckResult fp32_matmul;
  std::vector<LayerOpCheck> layer_ops;  // FP32 rmsnorm, rope, silu_mul, paged_attention
  std::vector<DTypeCheck> other_dtypes;  // each declared dtype except F32
  bool quarantined = false;
  std::string quarantine_reason;
};

struct RouteReport {
  Request request;
  std::string target;   // empty when refused
  std::string reason;   // "highest perf among F32-capable", "only F16-capable backend", or the refusal
  bool refused = false;
};

struct Walkthrough {
  std::vector<BackendReport> backends;
  std::vector<RouteReport> routes;
  [[nodiscard]] bool fp32_all_pass() const;
  // Every ABI 2.2 op a backend declares passes its FP32 check.
  [[nodiscard]] bool layer_ops_all_pass() const;
};

// Runs the checks, quarantines per options.gate (this changes `reg`), then routes.
Walkthrough run_walkthrough(Registry& reg, const WalkthroughOptions& options);

}  // namespace gpulab::hal
