// Hardware cache counters (cache-references, cache-misses) around a region,
// through perf_event_open(2) — what `perf stat -e cache-misses,...` reads.
// Virtual machines and locked-down kernels often refuse; then `available()`
// is false and `reason()` says why, and the report prints "unavailable".
#pragma once

#include <cstdint>
#include <string>

namespace membench {

class CacheCounters {
 public:
  CacheCounters();
  ~CacheCounters();
  CacheCounters(const CacheCounters&) = delete;
  CacheCounters& operator=(const CacheCounters&) = delete;

  [[nodiscard]] bool available() const { return refs_fd_ >= 0 && misses_fd_ >= 0; }
  [[nodiscard]] const std::string& reason() const { return reason_; }

  void start();
  // Counts since start(); zeros when unavailable.
  struct Counts {
    std::uint64_t references = 0;
    std::uint64_t misses = 0;
  };
  Counts stop();

 private:
  int refs_fd_ = -1;
  int misses_fd_ = -1;
  std::string reason_;
};

}  // namespace membench
