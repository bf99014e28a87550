#include "coalescing/stride_plot.hpp"

#include <fmt/core.h>

#include <gpulab/errors.hpp>

#include "coalescing/report.hpp"
#include "coalescing/sector_model.hpp"

namespace coalescing {

gpulab::PlotSpec stride_plot(const gpulab::Json* measured) {
  gpulab::PlotSpec spec;
  spec.title = "strided copy: bandwidth relative to stride 1";
  spec.x_label = "stride (floats)";
  spec.y_label = "effective bandwidth / stride-1 bandwidth";
  spec.log_x = true;
  spec.log_y = true;
  gpulab::PlotSeries model{"sector model (32-byte sectors)", {}, {}, false};
  for (int s : kStrides) {
    model.x.push_back(s);
    model.y.push_back(predicted_relative_bandwidth(strided_access(static_cast<std::uint64_t>(s)),
                                                   strided_access(1)));
  }
  spec.series.push_back(model);
  if (measured != nullptr) {
    const auto bad = [] {
      return gpulab::UsageError(
          "--measured: not the output of `coalescing-bench --json` with a stride sweep");
    };
    if (!measured->is_object() || !measured->contains("stride") ||
        !(*measured)["stride"].is_array() || (*measured)["stride"].empty())
      throw bad();
    gpulab::PlotSeries got{"measured", {}, {}, true};
    double base = 0;
    for (const auto& row : (*measured)["stride"]) {
      if (!row.is_object() || !row.contains("label") || !row["label"].is_string() ||
          !row.contains("gbs") || !row["gbs"].is_number())
        throw bad();
      double stride = 0;
      try {
        stride = std::stod(row["label"].get<std::string>());
      } catch (const std::exception&) {
        throw bad();
      }
      if (stride < 1) throw bad();
      const double gbs = row["gbs"].get<double>();
      if (stride == 1) base = gbs;
      got.x.push_back(stride);
      got.y.push_back(gbs);
    }
    if (base <= 0) throw gpulab::UsageError("--measured: the stride sweep has no stride-1 row");
    for (auto& y : got.y) y /= base;
    spec.series.push_back(got);
  }
  return spec;
}

}  // namespace coalescing
