// The P04 fakegpu device's stats: the text attribute the kernel module exposes
// in sysfs and fakegpud serves as MOUNTDIR/stats ("name value" per line:
// contexts, buffers, bytes_in_use, submits, completed, allocs, frees,
// quota_rejections, pool_rejections, invalid_requests).
#pragma once

#include <filesystem>

#include "exporter/source.hpp"

namespace exporter {

class FakegpuSource : public Source {
 public:
  static constexpr const char* kDefaultStatsPath = "/sys/class/misc/fakegpu/stats";
  explicit FakegpuSource(std::filesystem::path stats_file = kDefaultStatsPath);
  [[nodiscard]] std::string_view name() const override { return "fakegpu"; }
  // contexts, buffers -> fakegpu_contexts, fakegpu_buffers (gauges);
  // bytes_in_use -> fakegpu_memory_used_bytes (gauge); every other line NAME ->
  // fakegpu_NAME_total (counter). A missing file is "unavailable"; a line that
  // is not "name unsigned-integer" makes the whole read unavailable too.
  Availability collect(gpulab::prom::Exposition& out) override;

 private:
  std::filesystem::path path_;
};

}  // namespace exporter
