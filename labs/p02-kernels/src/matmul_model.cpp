#include "kernels/matmul_model.hpp"

#include <algorithm>
#include <stdexcept>

namespace kernels {

const std::vector<MatmulShape>& matmul_shapes() {
  static const std::vector<MatmulShape> shapes = {
      {MatmulKernel::kNaive, "naive", 16, 16, 0, 256, 1, 1},
      {MatmulKernel::kTiled, "tiled", 32, 32, 32, 1024, 1, 1},
      {MatmulKernel::kRect64x16, "rect64x16", 64, 16, 16, 1024, 1, 1},
      {MatmulKernel::kMicro2x2, "micro2x2", 32, 32, 32, 256, 2, 2},
      {MatmulKernel::kMicro4x4, "micro4x4", 64, 64, 16, 256, 4, 4},
      {MatmulKernel::kMicro8x8, "micro8x8", 128, 128, 8, 256, 8, 8},
      {MatmulKernel::kMicro8x8Bounded, "micro8x8_lb", 128, 128, 8, 256, 8, 8},
      {MatmulKernel::kCublas, "cublas", 0, 0, 0, 0, 0, 0},
  };
  return shapes;
}

const MatmulShape& shape_of(MatmulKernel k) {
  for (const auto& s : matmul_shapes())
    if (s.kernel == k) return s;
  throw std::logic_error("shape_of: unknown kernel");
}

std::optional<MatmulKernel> parse_matmul_kernel(std::string_view name) {
  for (const auto& s : matmul_shapes())
    if (s.name == name) return s.kernel;
  return std::nullopt;
}

double matmul_flops(std::int64_t n) {
  const double d = static_cast<double>(n);
  return 2.0 * d * d * d;
}

double tflops(std::int64_t n, double seconds) {
  return seconds > 0 ? matmul_flops(n) / seconds / 1e12 : 0.0;
}

double global_loads_per_fma(const MatmulShape& s) {
  if (s.kernel == MatmulKernel::kNaive) return 2.0;  // a row element and a column element per FMA
  if (s.block_rows <= 0 || s.block_cols <= 0) return 0.0;  // cuBLAS: not modelled
  // A block loads block_rows x n of A and n x block_cols of B for block_rows*block_cols*n FMAs.
  return 1.0 / s.block_cols + 1.0 / s.block_rows;
}

double inner_loads_per_fma(const MatmulShape& s) {
  if (s.micro_rows <= 0 || s.micro_cols <= 0) return 0.0;
  return static_cast<double>(s.micro_rows + s.micro_cols) / (s.micro_rows * s.micro_cols);
}

double arithmetic_intensity(const MatmulShape& s) {
  const double loads = global_loads_per_fma(s);
  return loads > 0 ? 2.0 / (4.0 * loads) : 0.0;
}

std::optional<Roof> datasheet_roof(std::string_view gpu) {
  // NVIDIA datasheets: T4; A100 SXM4 40 GB; H100 SXM5; H200 SXM. FP32 without Tensor Cores.
  static const Roof roofs[] = {
      {"t4", 320, 8.1}, {"a100", 1555, 19.5}, {"h100", 3350, 67}, {"h200", 4800, 67}};
  for (const auto& r : roofs)
    if (r.gpu == gpu) return r;
  return std::nullopt;
}

double roofline_tflops(const MatmulShape& s, const Roof& roof) {
  const double ai = arithmetic_intensity(s);
  if (ai <= 0) return roof.fp32_tflops;
  return std::min(roof.fp32_tflops, ai * roof.bandwidth_gbs / 1e3);
}

}  // namespace kernels
