// Which HAL backend runs the model: it must take F32 matmul and the HAL ABI
// 2.2 decoder-layer ops (rmsnorm, rope, silu_mul, paged_attention). "auto"
// takes the one with the largest perf hint; a name pins that backend.
#pragma once

#include <string>

#include "hal/hal.hpp"

namespace serving {

// Throws gpulab::UsageError naming --backend and the loaded backends when the
// name is unknown or lacks one of those ops ("backend blas (ABI 2.1) does not
// declare rmsnorm").
const gpulab::hal::Backend& choose_backend(const gpulab::hal::Registry& registry, const std::string& name);

}  // namespace serving
