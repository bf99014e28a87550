// Progress of long work (a sweep, a big trace) on stderr — only when stderr is
// a terminal, so logs, pipes and ctest stay clean.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace gpulab {

class Progress {
 public:
  Progress(std::string label, std::size_t total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void update(std::size_t done);
  [[nodiscard]] bool enabled() const { return enabled_; }

 private:
  std::string label_;
  std::size_t total_;
  bool enabled_;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace gpulab
