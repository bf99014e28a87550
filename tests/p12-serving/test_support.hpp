// Shared by the serving tests: one HAL registry over this build's backends
// and the tiny model on a named backend.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "hal/hal.hpp"
#include "serving/backend_choice.hpp"
#include "serving/model.hpp"

namespace serving_test {

inline gpulab::hal::Registry& registry() {
  static gpulab::hal::Registry reg(gpulab::hal::DiscoveryOptions::only_dir(gpulab::hal::build_backend_dir()));
  return reg;
}

inline serving::ModelConfig tiny() {
  serving::ModelConfig c;
  serving::preset("tiny", c);
  return c;
}

inline const serving::Model& tiny_model(const std::string& backend = "cpu_ref") {
  // The registry first: statics die in reverse order, and a model's HAL buffers
  // must be freed while its backend is still loaded.
  auto& reg = registry();
  static std::map<std::string, std::unique_ptr<serving::Model>> models;
  auto& m = models[backend];
  if (!m) m = std::make_unique<serving::Model>(tiny(), serving::choose_backend(reg, backend));
  return *m;
}

}  // namespace serving_test
