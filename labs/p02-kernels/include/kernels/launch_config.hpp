// Launch-configuration arithmetic: the ceil-div grid every CUDA launch needs,
// and the hardware limits a configuration must respect. Pure host code, so
// the interview question ("1920x1080 with 16x16 blocks?") is a unit test.
#pragma once

#include <cstdint>
#include <string>

namespace kernels {

struct Dim3 {
  std::uint32_t x = 1, y = 1, z = 1;
  friend bool operator==(const Dim3&, const Dim3&) = default;
};

struct LaunchConfig {
  Dim3 grid;
  Dim3 block;
};

// ceil(n / d) without floating point; d must be > 0.
constexpr std::uint64_t ceil_div(std::uint64_t n, std::uint64_t d) {
  return (n + d - 1) / d;
}

// One thread per element, `threads` per block: grid = ceil(n / threads).
LaunchConfig launch_1d(std::uint64_t n, std::uint32_t threads);
// One thread per pixel of a width x height image with bx x by blocks.
LaunchConfig launch_2d(std::uint64_t width, std::uint64_t height, std::uint32_t bx,
                       std::uint32_t by);

std::uint64_t total_threads(const LaunchConfig& cfg);
std::uint64_t threads_per_block(const Dim3& block);
// Threads launched that the tail guard must switch off (grid*block - n).
std::uint64_t idle_tail_threads(const LaunchConfig& cfg, std::uint64_t n);

// Empty when `cfg` is launchable on any sm_75+ GPU; otherwise why not
// (more than 1,024 threads per block, grid.y or grid.z over 65,535, ...).
std::string launch_problem(const LaunchConfig& cfg);

// The `launch` subcommand's input: "1920x1080" -> {1920, 1080}, "1048579" -> {1048579, 1}.
// A gpulab::UsageError naming `flag` for anything else (zero, junk, W x H past 64 bits).
struct Extent {
  std::uint64_t w = 1, h = 1;
};
Extent parse_extent(const std::string& text, const char* flag);

// The grid for --size and --block as the user wrote them: 2-D when either has an 'x'.
// Blocks over 1,024 per side are a UsageError.
struct LaunchRequest {
  LaunchConfig cfg;
  std::uint64_t elements = 0;
};
LaunchRequest launch_for(const std::string& size, const std::string& block);

}  // namespace kernels
