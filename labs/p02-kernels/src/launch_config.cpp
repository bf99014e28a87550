#include "kernels/launch_config.hpp"

#include <fmt/core.h>

#include <charconv>
#include <gpulab/errors.hpp>
#include <limits>
#include <string_view>

namespace kernels {
namespace {

std::uint32_t to_dim(std::uint64_t v) {
  // Saturate: launch_problem() reports an oversized grid instead of wrapping it.
  return v > std::numeric_limits<std::uint32_t>::max() ? std::numeric_limits<std::uint32_t>::max()
                                                       : static_cast<std::uint32_t>(v);
}

}  // namespace

LaunchConfig launch_1d(std::uint64_t n, std::uint32_t threads) {
  LaunchConfig cfg;
  cfg.block = {threads, 1, 1};
  cfg.grid = {to_dim(threads == 0 ? 0 : ceil_div(n, threads)), 1, 1};
  return cfg;
}

LaunchConfig launch_2d(std::uint64_t width, std::uint64_t height, std::uint32_t bx,
                       std::uint32_t by) {
  LaunchConfig cfg;
  cfg.block = {bx, by, 1};
  cfg.grid = {to_dim(bx == 0 ? 0 : ceil_div(width, bx)), to_dim(by == 0 ? 0 : ceil_div(height, by)),
              1};
  return cfg;
}

std::uint64_t threads_per_block(const Dim3& block) {
  return std::uint64_t{block.x} * block.y * block.z;
}

std::uint64_t total_threads(const LaunchConfig& cfg) {
  return std::uint64_t{cfg.grid.x} * cfg.grid.y * cfg.grid.z * threads_per_block(cfg.block);
}

std::uint64_t idle_tail_threads(const LaunchConfig& cfg, std::uint64_t n) {
  const std::uint64_t t = total_threads(cfg);
  return t > n ? t - n : 0;
}

std::string launch_problem(const LaunchConfig& cfg) {
  // Limits shared by every architecture from sm_75 on (CUDA Programming Guide, compute capabilities
  // table).
  const std::uint64_t tpb = threads_per_block(cfg.block);
  if (tpb == 0 || cfg.grid.x == 0 || cfg.grid.y == 0 || cfg.grid.z == 0)
    return "empty launch (a dimension is 0)";
  if (tpb > 1024) return fmt::format("{} threads per block (the limit is 1,024)", tpb);
  if (cfg.block.x > 1024 || cfg.block.y > 1024 || cfg.block.z > 64)
    return "block dimension over its limit (x, y <= 1,024, z <= 64)";
  if (cfg.grid.x > 2147483647u)
    return fmt::format("grid.x = {} (the limit is 2^31 - 1)", cfg.grid.x);
  if (cfg.grid.y > 65535 || cfg.grid.z > 65535)
    return fmt::format("grid.y = {}, grid.z = {} (each is limited to 65,535)", cfg.grid.y,
                       cfg.grid.z);
  return {};
}

Extent parse_extent(const std::string& text, const char* flag) {
  const auto x = text.find('x');
  auto number = [&](std::string_view s) {
    std::uint64_t v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || v == 0)
      throw gpulab::UsageError(
          fmt::format("{} '{}': expected N or WxH with positive integers", flag, text));
    return v;
  };
  if (x == std::string::npos) return {number(text), 1};
  const std::uint64_t w = number(std::string_view(text).substr(0, x));
  const std::uint64_t h = number(std::string_view(text).substr(x + 1));
  // W x H is the element count everything after this multiplies by.
  if (std::uint64_t n = 0; __builtin_mul_overflow(w, h, &n))
    throw gpulab::UsageError(fmt::format("{} '{}': W x H does not fit in 64 bits", flag, text));
  return {w, h};
}

LaunchRequest launch_for(const std::string& size, const std::string& block) {
  const Extent e = parse_extent(size, "--size");
  const Extent b = parse_extent(block, "--block");
  if (b.w > 1024 || b.h > 1024)
    throw gpulab::UsageError("--block: a block dimension is at most 1024");
  const bool two_d = size.find('x') != std::string::npos || block.find('x') != std::string::npos;
  const auto bx = static_cast<std::uint32_t>(b.w), by = static_cast<std::uint32_t>(b.h);
  return {two_d ? launch_2d(e.w, e.h, bx, by) : launch_1d(e.w, bx), e.w * e.h};
}

}  // namespace kernels
