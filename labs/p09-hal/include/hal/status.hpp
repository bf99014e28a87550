// The result of one call across the ABI: the status code the backend returned
// and the message it wrote for that call.
#pragma once

#include <gpulab_hal/gpulab_hal.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace gpulab::hal {

struct Status {
  std::int32_t code = GPULAB_HAL_OK;
  std::string message;  // empty when ok()

  [[nodiscard]] bool ok() const { return code == GPULAB_HAL_OK; }
  static Status success() { return {}; }
  static Status failure(std::int32_t code, std::string message) {
    return Status{code, std::move(message)};
  }
};

// "ok", "invalid argument", "unsupported", "out of memory", "no device", "device error",
// "internal", or "status N" for a code this core does not know.
std::string status_name(std::int32_t code);

// "<status name>: <message>" — for one-line error output.
std::string describe(const Status& s);

}  // namespace gpulab::hal
