// The roofline model of each matmul variant, computed before anything runs:
// how many bytes a kernel must move from DRAM (if no cache helped) and how
// many shared-memory loads each FMA costs. It predicts the order of the
// measured table; the GPU decides the numbers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kernels {

enum class MatmulKernel {
  kNaive,
  kTiled,
  kRect64x16,
  kMicro2x2,
  kMicro4x4,
  kMicro8x8,
  kMicro8x8Bounded,
  kCublas
};

struct MatmulShape {
  MatmulKernel kernel;
  std::string_view name;       // as printed and accepted by --kernels
  int block_rows, block_cols;  // the C tile one thread block computes
  int k_step;                  // K-extent of the shared-memory tiles (0: none)
  int threads;                 // threads per block
  int micro_rows, micro_cols;  // C elements per thread
};

// Every variant, in the order the program runs them.
const std::vector<MatmulShape>& matmul_shapes();
const MatmulShape& shape_of(MatmulKernel k);
std::optional<MatmulKernel> parse_matmul_kernel(std::string_view name);

// FLOPs of C = A*B with n x n operands, counting an FMA as two (the TFLOP/s
// convention; the curriculum's "AI = 1/8" counts it as one).
double matmul_flops(std::int64_t n);
double tflops(std::int64_t n, double seconds);

// Global-memory floats loaded per FMA if no cache helped:
// 2 for naive, 1/block_cols + 1/block_rows for a block-tiled kernel.
double global_loads_per_fma(const MatmulShape& s);
// Shared-memory (or, for naive, global) loads per FMA inside the inner loop:
// (micro_rows + micro_cols) / (micro_rows * micro_cols).
double inner_loads_per_fma(const MatmulShape& s);
// FLOP per DRAM byte = 2 / (4 * global_loads_per_fma).
double arithmetic_intensity(const MatmulShape& s);

struct Roof {
  std::string_view gpu;
  double bandwidth_gbs;  // datasheet DRAM bandwidth
  double fp32_tflops;    // datasheet FP32 (non-Tensor-Core) peak
};
// Datasheet figures for t4, a100, h100, h200; nullopt for another name.
std::optional<Roof> datasheet_roof(std::string_view gpu);
// min(peak, AI * bandwidth) in TFLOP/s.
double roofline_tflops(const MatmulShape& s, const Roof& roof);

}  // namespace kernels
