// A test suite over the HAL backends this build made (lib/hal-backends): one
// registry for the whole suite, and get(name) that fails loudly when a backend
// the test needs was not built.
#pragma once

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <string_view>

#include "hal/hal.hpp"

namespace conformance_test {

class BuiltBackends : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    reg_ = new gpulab::hal::Registry(gpulab::hal::DiscoveryOptions::only_dir(gpulab::hal::build_backend_dir()));
  }
  static void TearDownTestSuite() {
    delete reg_;
    reg_ = nullptr;
  }
  static const gpulab::hal::Backend& get(std::string_view name) {
    const gpulab::hal::Backend* b = reg_->find(name);
    if (!b) throw std::runtime_error("backend not built: " + std::string(name));
    return *b;
  }
  inline static gpulab::hal::Registry* reg_ = nullptr;
};

}  // namespace conformance_test
