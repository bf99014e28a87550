// The HAL backend a task runs on, chosen by name from what discovery loaded
// (GPULAB_HAL_BACKENDS, manifests, the build's backend dir), plus the one
// operation every task uses: an F32 matmul on host arrays.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hal/hal.hpp"

namespace gpulab::platform::task {

class HalBackend {
 public:
  // Picks `name` from what discovery finds, and loads `companions` (e.g. the
  // cpu_ref reference) beside it. Only the files named like those backends
  // (gpulab-hal-<name>.so on the discovery paths) are loaded first, so a
  // cpu_ref job on a GPU node never initializes CUDA; when that does not find
  // `name`, everything discoverable is loaded. Throws UsageError when no
  // backend of that name loaded (the message lists the loaded ones) and
  // Unsupported when it was found but cannot run here (no device, init failed).
  explicit HalBackend(const std::string& name, const std::vector<std::string>& companions = {});

  [[nodiscard]] const hal::Backend& backend() const { return *backend_; }
  [[nodiscard]] std::string name() const { return std::string(backend_->name()); }
  // Another loaded backend of the same registry (the reference, cpu_ref), or
  // UsageError naming the loaded ones.
  [[nodiscard]] const hal::Backend& other(const std::string& name) const;
  // Names of the backends that loaded, in load order.
  [[nodiscard]] std::vector<std::string> loaded_names() const;

 private:
  std::unique_ptr<hal::Registry> registry_;  // owns the backend; never moves
  const hal::Backend* backend_ = nullptr;
};

// C (m x n) = A (m x k) * B (k x n), row-major F32 on `b`. A failing status is
// a RunError naming the backend and the shape.
void matmul_f32(const hal::Backend& b, std::uint64_t m, std::uint64_t n, std::uint64_t k,
                const float* a, const float* bm, float* c);

}  // namespace gpulab::platform::task
