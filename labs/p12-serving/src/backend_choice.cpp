#include "serving/backend_choice.hpp"

#include <fmt/format.h>

#include "gpulab/cli.hpp"

namespace serving {

namespace hal = gpulab::hal;

const hal::Backend& choose_backend(const hal::Registry& registry, const std::string& name) {
  const hal::Request probe{hal::Op::kMatmul, hal::DType::kF32, 1, 1, 1};
  auto chosen = name == "auto" ? registry.route(probe) : registry.pin(name, probe);
  if (!chosen) {
    std::string loaded;
    for (const auto& b : registry.backends()) loaded += (loaded.empty() ? "" : ", ") + std::string(b->name());
    throw gpulab::UsageError(fmt::format("--backend {}: {} (loaded: {})", name, chosen.error().message,
                                         loaded.empty() ? "none" : loaded));
  }
  return *chosen.value();
}

}  // namespace serving
