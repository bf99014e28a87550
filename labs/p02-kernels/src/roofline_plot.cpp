#include "kernels/roofline_plot.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <gpulab/errors.hpp>
#include <vector>

namespace kernels {

gpulab::PlotSpec roofline_plot(const Roof& roof, const gpulab::Json* measured) {
  gpulab::PlotSpec spec;
  spec.title = fmt::format("matmul roofline, {} datasheet ({:.0f} GB/s, {:.1f} TFLOP/s FP32)",
                           roof.gpu, roof.bandwidth_gbs, roof.fp32_tflops);
  spec.x_label = "arithmetic intensity (FLOP per DRAM byte, no cache reuse)";
  spec.y_label = "TFLOP/s";
  spec.log_x = true;
  spec.log_y = true;

  gpulab::PlotSeries line{"roof: min(peak, AI x bandwidth)", {}, {}, false};
  std::vector<double> xs{roof.fp32_tflops * 1e3 / roof.bandwidth_gbs};  // the ridge point, exactly
  for (double ai = 1.0 / 16; ai <= 256.0; ai *= 2.0) xs.push_back(ai);
  std::sort(xs.begin(), xs.end());
  for (double ai : xs) {
    line.x.push_back(ai);
    line.y.push_back(std::min(roof.fp32_tflops, ai * roof.bandwidth_gbs / 1e3));
  }
  spec.series.push_back(line);

  gpulab::PlotSeries model{"model: kernels on the roof", {}, {}, true};
  for (const auto& s : matmul_shapes()) {
    if (s.kernel == MatmulKernel::kCublas) continue;
    model.x.push_back(arithmetic_intensity(s));
    model.y.push_back(roofline_tflops(s, roof));
  }
  spec.series.push_back(model);

  if (measured != nullptr) {
    if (!measured->is_object() || !measured->contains("matmul") ||
        !(*measured)["matmul"].is_array())
      throw gpulab::UsageError(
          "--measured: not the output of `cuda-kernels --json` (no \"matmul\" array)");
    gpulab::PlotSeries got{"measured", {}, {}, true};
    for (const auto& row : (*measured)["matmul"]) {
      if (!row.is_object() || !row.contains("kernel") || !row["kernel"].is_string() ||
          !row.contains("tflops") || !row["tflops"].is_number())
        throw gpulab::UsageError("--measured: a matmul row lacks \"kernel\" or \"tflops\"");
      const auto k = parse_matmul_kernel(row["kernel"].get<std::string>());
      if (!k)
        throw gpulab::UsageError(
            fmt::format("--measured: unknown kernel '{}'", row["kernel"].get<std::string>()));
      if (*k == MatmulKernel::kCublas) continue;  // its intensity is not modelled
      got.x.push_back(arithmetic_intensity(shape_of(*k)));
      got.y.push_back(row["tflops"].get<double>());
    }
    spec.series.push_back(got);
  }
  return spec;
}

}  // namespace kernels
