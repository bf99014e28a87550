#include "gpulab/inventory/device_access.hpp"

#include <fmt/format.h>

#include <charconv>

namespace gpulab::inventory {

int backend_ordinal(std::string_view device_id) {
  const auto colon = device_id.rfind(':');
  if (colon == std::string_view::npos) return 0;
  const std::string_view digits = device_id.substr(colon + 1);
  int n = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc{} || end != digits.data() + digits.size() || n < 0) return 0;
  return n;
}

std::vector<std::string> device_files(std::string_view backend, int ordinal) {
  std::vector<std::string> out;
  if (backend == "cuda") {
    out.push_back(fmt::format("/dev/nvidia{}", ordinal));
    for (const std::string_view n : kNvidiaControlNodes) out.emplace_back(n);
  } else if (backend == "fakegpu") {
    out.emplace_back("/dev/fakegpu");
  }
  return out;
}

std::string_view visible_devices_variable(std::string_view backend) {
  return backend == "cuda" ? "CUDA_VISIBLE_DEVICES" : "";
}

}  // namespace gpulab::inventory
