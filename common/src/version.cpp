#include "gpulab/version.hpp"

#include <fmt/format.h>

#include "gpulab/version.h"  // generated from project(VERSION)

namespace gpulab {

std::string_view version() {
  return GPULAB_VERSION_STRING;
}

std::string version_line(std::string_view program) {
  return fmt::format("{} {}", program, version());
}

}  // namespace gpulab
