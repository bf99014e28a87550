// The roofline as a picture: the roof of a datasheet GPU, each kernel at its
// modelled arithmetic intensity, and optionally what a measured run
// (`cuda-kernels --json`) achieved at the same intensity.
#pragma once

#include <gpulab/json.hpp>
#include <gpulab/plot.hpp>

#include "kernels/matmul_model.hpp"

namespace kernels {

// `measured` is null or the document `cuda-kernels --json` printed; throws
// gpulab::UsageError when it is not one.
gpulab::PlotSpec roofline_plot(const Roof& roof, const gpulab::Json* measured);

}  // namespace kernels
