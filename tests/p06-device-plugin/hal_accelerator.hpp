// The accelerator a platform agent reports for one HAL device (`gpulabd agent --devices
// cuda:2,...`): the inventory tests, with and without the gRPC API, build their nodes from it.
#pragma once

#include <cstdint>
#include <string>

#include "gpulab/inventory/accelerator.hpp"

namespace device_plugin_test {

inline gpulab::inventory::Accelerator hal_accelerator(const std::string& backend, int ordinal,
                                                      int index) {
  gpulab::inventory::Accelerator a;
  a.id = backend + ":" + std::to_string(ordinal);
  a.index = index;
  a.vendor = backend == "cuda" ? "nvidia" : "cpu";
  a.backend = backend;
  a.model = "HAL " + backend + " backend";
  a.memory_bytes = std::uint64_t{8} << 30;
  return a;
}

}  // namespace device_plugin_test
