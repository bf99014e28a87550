#include "hal/status.hpp"

namespace gpulab::hal {

std::string status_name(std::int32_t code) {
  switch (code) {
    case GPULAB_HAL_OK: return "ok";
    case GPULAB_HAL_ERR_INVALID_ARGUMENT: return "invalid argument";
    case GPULAB_HAL_ERR_UNSUPPORTED: return "unsupported";
    case GPULAB_HAL_ERR_OUT_OF_MEMORY: return "out of memory";
    case GPULAB_HAL_ERR_NO_DEVICE: return "no device";
    case GPULAB_HAL_ERR_DEVICE: return "device error";
    case GPULAB_HAL_ERR_INTERNAL: return "internal";
    default: return "status " + std::to_string(code);
  }
}

std::string describe(const Status& s) {
  if (s.ok()) return "ok";
  return s.message.empty() ? status_name(s.code) : status_name(s.code) + ": " + s.message;
}

}  // namespace gpulab::hal
