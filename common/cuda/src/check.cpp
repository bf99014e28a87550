#include "gpulab/cuda/check.hpp"

#include <fmt/core.h>

#include <filesystem>

#include "gpulab/errors.hpp"

namespace gpulab::cuda {

void throw_cuda_error(const char* file, int line, const char* call, const std::string& message) {
  throw gpulab::RunError(fmt::format("CUDA error at {}:{}: {}: {}", std::filesystem::path(file).filename().string(),
                                     line, call, message));
}

void throw_no_device(const std::string& reason) {
  throw gpulab::Unsupported(fmt::format("no CUDA device ({})", reason));
}

}  // namespace gpulab::cuda
