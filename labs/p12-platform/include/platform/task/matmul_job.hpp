// `gpulab-task matmul`: a chain of K n x n FP32 matmuls on one HAL backend,
// C_{i+1} = C_i x B_i, with B_i scaled by sqrt(3/n) so every C_i keeps the
// variance of C_0 (values stay bounded however long the chain).
//
// Each link is verified on its own inputs against cpu_ref and a binary64
// reference under HAL's FP32 tolerance (link_check.hpp), so float rounding
// does not compound along the chain; GFLOP/s counts the backend's matmul
// calls alone (inputs and outputs stay on the backend between links).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpulab/json.hpp"

namespace gpulab::platform::task {

inline constexpr std::uint64_t kMaxMatmulN = 4096;
inline constexpr std::uint64_t kMaxMatmulChain = 1000;

struct MatmulOptions {
  std::string backend = "cpu_ref";
  std::uint64_t n = 256;
  std::uint64_t chain = 4;
  std::uint64_t seed = 1;
};

// UsageError naming the flag when a value is out of bounds.
void validate(const MatmulOptions& o);

struct LinkResult {
  std::uint64_t index = 0;
  double seconds = 0;          // the backend's matmul call alone
  double gflops = 0;           // 2 n^3 / seconds
  double sum = 0;              // of every element of C_{i+1}
  std::vector<float> samples;  // a few seeded elements of C_{i+1}
  double worst_ratio = 0;      // backend: sampled rows and the sum, vs binary64
  double cpu_ref_ratio = 0;    // cpu_ref on the same sampled rows, vs binary64
  bool pass = false;
};

struct MatmulSummary {
  std::string backend;
  std::uint64_t n = 0;
  std::uint64_t chain = 0;
  double seconds = 0;  // sum of the links' matmul time
  double gflops = 0;   // 2 n^3 chain / seconds
  double worst_ratio = 0;
  std::uint64_t failed_links = 0;
  bool pass = false;
};

// Runs the chain; `on_link` sees every link as it is verified.
MatmulSummary run_matmul_chain(const MatmulOptions& o,
                               const std::function<void(const LinkResult&)>& on_link);

gpulab::Json link_event(const LinkResult& r);     // {"event":"matmul","i":...}
gpulab::Json done_event(const MatmulSummary& s);  // {"event":"done",...}

}  // namespace gpulab::platform::task
