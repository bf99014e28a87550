// The stride cliff as a picture: bandwidth relative to stride 1 from the
// sector model, and optionally from a saved `coalescing-bench --json` run.
#pragma once

#include <gpulab/json.hpp>
#include <gpulab/plot.hpp>

namespace coalescing {

// Throws gpulab::UsageError when `measured` is not coalescing-bench's JSON with a stride sweep.
gpulab::PlotSpec stride_plot(const gpulab::Json* measured);

}  // namespace coalescing
