#include "exporter/fakegpu_source.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

namespace exporter {

namespace prom = gpulab::prom;

FakegpuSource::FakegpuSource(std::filesystem::path stats_file) : path_(std::move(stats_file)) {}

Availability FakegpuSource::collect(prom::Exposition& out) {
  std::ifstream in(path_);
  if (!in) return unavailable(fmt::format("{}: {}", path_.string(), std::strerror(errno)));
  std::string text;
  {
    char buf[4096];
    while (in.read(buf, sizeof buf) || in.gcount() > 0) {
      text.append(buf, static_cast<std::size_t>(in.gcount()));
      if (text.size() > 64 * 1024)
        return unavailable(fmt::format("{}: larger than 64 KiB", path_.string()));
    }
  }
  prom::Exposition mine;
  std::istringstream lines(text);
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    ++n;
    if (line.empty()) continue;
    const auto sp = line.find(' ');
    const std::string key = line.substr(0, sp);
    const std::string value = sp == std::string::npos ? "" : line.substr(sp + 1);
    unsigned long long v = 0;
    const auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (value.empty() || ec != std::errc() || p != value.data() + value.size() ||
        !prom::valid_label_name(key) || key.find(':') != std::string::npos) {
      return unavailable(
          fmt::format("{}:{}: expected 'name value', got '{}'", path_.string(), n, line));
    }
    const auto x = static_cast<double>(v);
    if (key == "contexts") {
      mine.gauge("fakegpu_contexts", "Open contexts (file descriptors) on the fakegpu device.")
          .set({}, x);
    } else if (key == "buffers") {
      mine.gauge("fakegpu_buffers", "Live buffers on the fakegpu device.").set({}, x);
    } else if (key == "bytes_in_use") {
      mine.gauge("fakegpu_memory_used_bytes", "Device memory allocated on the fakegpu device.")
          .set({}, x);
    } else {
      mine.counter(fmt::format("fakegpu_{}_total", key),
                   fmt::format("fakegpu stats '{}' since the device was created.", key))
          .set({}, x);
    }
  }
  if (mine.empty()) return unavailable(fmt::format("{}: no stats in the file", path_.string()));
  out.merge(mine);
  return available();
}

}  // namespace exporter
