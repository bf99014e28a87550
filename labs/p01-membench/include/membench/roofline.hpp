// The roofline model: attainable = min(peak, AI x bandwidth), the ridge point
// peak / bandwidth, and the spec-sheet numbers of the accelerators the
// curriculum argues about.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace membench {

// FLOP per byte of the two placed kernels (FP32, no write-allocate):
// vector_add reads a, b and writes c for one add: 1 / 12.
inline constexpr double kVectorAddAi = 1.0 / 12.0;
// One b x b block product: 2b^3 FLOPs over three b x b FP32 tiles (3 * 4 b^2 bytes) = b/6.
double blocked_matmul_ai(int block);

// FLOP/s units are whatever the caller uses consistently (GFLOP/s with GB/s, TFLOP/s with TB/s).
double attainable(double peak, double bandwidth, double ai);
double ridge_point(double peak, double bandwidth);
// "memory-bound" left of the ridge, "compute-bound" at or right of it.
std::string_view bound_verdict(double ai, double ridge);

struct Accelerator {
  std::string_view name;
  double peak_tflops;    // dense (no 2:4 sparsity) 16-bit tensor throughput
  double bandwidth_tbs;  // memory bandwidth, TB/s (decimal)
  double memory_gb;
  std::string_view source;  // which spec sheet the numbers come from
};

// A100 40/80 GB SXM, H100 SXM, H200 SXM, MI300X, and T4 (Phase 02's card).
std::span<const Accelerator> accelerator_table();
std::optional<Accelerator> find_accelerator(std::string_view name);

// Batch-1 decode reads every weight once per token: tokens/s <= bandwidth / weight bytes.
double decode_tokens_per_s(double bandwidth_tbs, double params_billion, double bytes_per_param);
// Decode's arithmetic intensity: 2 FLOPs (one multiply-add) per parameter per token.
double decode_ai(double bytes_per_param);

}  // namespace membench
