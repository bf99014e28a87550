// Which HAL backend runs the model's matmuls: "auto" takes the router's
// choice for an F32 matmul (the largest perf hint), a name pins that backend.
#pragma once

#include <string>

#include "hal/hal.hpp"

namespace serving {

// Throws gpulab::UsageError naming --backend and the loaded backends when the
// name is unknown or cannot run F32 matmul.
const gpulab::hal::Backend& choose_backend(const gpulab::hal::Registry& registry, const std::string& name);

}  // namespace serving
