// Reading a Prometheus text file a lab wrote with --metrics-out, for tests:
// a file that does not parse is a test failure that names the file and line.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

#include "gpulab/prom_text.hpp"

namespace gpulab_test {

inline gpulab::prom::Exposition read_exposition(const std::filesystem::path& p) {
  std::ifstream in(p);
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  auto parsed = gpulab::prom::parse(text);
  EXPECT_TRUE(parsed) << p << ": " << (parsed ? "" : parsed.error().message);
  return parsed ? std::move(parsed).value() : gpulab::prom::Exposition{};
}

}  // namespace gpulab_test
