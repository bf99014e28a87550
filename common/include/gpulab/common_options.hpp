// The values of the flags every gpulab program shares (--json, --quick, --seed); cli.hpp
// adds them to a CLI::App. Apart so that a lab's command layer can take them without
// compiling CLI11.
#pragma once

#include <cstdint>

namespace gpulab {

struct CommonOptions {
  bool json = false;
  bool quick = false;
  std::uint64_t seed = 1;
};

}  // namespace gpulab
