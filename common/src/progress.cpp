#include "gpulab/progress.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>

namespace gpulab {

Progress::Progress(std::string label, std::size_t total)
    : label_(std::move(label)), total_(total), enabled_(isatty(STDERR_FILENO) == 1) {}

Progress::~Progress() {
  if (enabled_) fmt::print(stderr, "\r\033[K");  // leave the line as we found it
}

void Progress::update(std::size_t done) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (done < total_ && now - last_draw_ < std::chrono::milliseconds(100)) return;  // ~10 redraws/s
  last_draw_ = now;
  const double pct = total_ ? 100.0 * static_cast<double>(done) / static_cast<double>(total_) : 100.0;
  fmt::print(stderr, "\r\033[K{}: {}/{} ({:.0f}%)", label_, done, total_, pct);
  std::fflush(stderr);
}

}  // namespace gpulab
