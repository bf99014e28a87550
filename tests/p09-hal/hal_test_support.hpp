// Paths to this build's backends and test-only backends, for the p09-hal tests.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "hal/hal.hpp"

namespace hal_test {

namespace fs = std::filesystem;

inline fs::path backend(std::string_view name) {
  return gpulab::hal::build_backend_dir() / gpulab::hal::backend_file_name(name);
}
inline fs::path test_backend(std::string_view name) {
  return fs::path(GPULAB_HAL_TEST_BACKEND_DIR) / gpulab::hal::backend_file_name(name);
}
inline bool built(std::string_view name) { return fs::exists(backend(name)); }

// The one rejection recorded for `path`, or nullptr.
inline const gpulab::hal::Rejection* rejection_for(const gpulab::hal::Registry& reg, const fs::path& path) {
  for (const auto& r : reg.rejected())
    if (r.path == path) return &r;
  return nullptr;
}

}  // namespace hal_test
