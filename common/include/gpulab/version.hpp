// gpulab's version, as project(VERSION) in the top-level CMakeLists.txt sets it (through the
// generated gpulab/version.h). One version for every program, library and protocol document.
#pragma once

#include <string>
#include <string_view>

namespace gpulab {

// "0.1.0".
std::string_view version();
// "<program> <version>": what every program prints for --version (run_program adds the flag).
std::string version_line(std::string_view program);

}  // namespace gpulab
