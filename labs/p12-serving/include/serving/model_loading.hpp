// The model a subcommand runs: its config (preset or JSON file) checked
// against the engine options, weights uploaded to the chosen HAL backend.
// Every gpulab-serve subcommand that runs the engine loads it this way.
#pragma once

#include <memory>
#include <string>

#include "hal/hal.hpp"
#include "serving/engine.hpp"
#include "serving/model.hpp"

namespace serving {

struct ModelChoice {
  std::string model = "small";  // preset name or JSON file
  std::string backend = "auto";
};

// The registry outlives the model: the model's buffers are freed through its backend.
struct LoadedModel {
  gpulab::hal::Registry registry{gpulab::hal::DiscoveryOptions::from_environment()};
  ModelConfig config;
  std::unique_ptr<Model> model;
};

// Throws gpulab::UsageError for a bad config, engine options the model cannot
// run with, or a backend that is missing or lacks the decoder ops.
std::unique_ptr<LoadedModel> load_model(const ModelChoice& choice, const EngineOptions& engine);

}  // namespace serving
