// The curriculum's Lab 01 walkthrough as data (hal-demo prints it): every
// loaded backend's FP32 matmul conformance, every other declared dtype tested
// (a backend that fails a declared dtype is quarantined: out of routing), and
// routing decisions for FP32, FP16, BF16 and FP8 matmul plus FP32 softmax.
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

struct BackendReport {
  std::string name;
  CheckResult fp32_matmul;
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
};

// Runs the checks, quarantines per options.gate (this changes `reg`), then routes.
Walkthrough run_walkthrough(Registry& reg, const WalkthroughOptions& options);

}  // namespace gpulab::hal
