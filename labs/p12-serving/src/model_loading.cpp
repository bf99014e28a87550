#include "serving/model_loading.hpp"

#include <stdexcept>

#include "gpulab/errors.hpp"
#include "serving/backend_choice.hpp"

namespace serving {

std::unique_ptr<LoadedModel> load_model(const ModelChoice& choice, const EngineOptions& engine) {
  auto l = std::make_unique<LoadedModel>();
  l->config = load_model_config(choice.model);
  try {
    validate(engine, l->config);
  } catch (const std::invalid_argument& e) {
    throw gpulab::UsageError(e.what());
  }
  l->model = std::make_unique<Model>(l->config, choose_backend(l->registry, choice.backend));
  return l;
}

}  // namespace serving
