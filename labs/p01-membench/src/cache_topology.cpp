#include "membench/cache_topology.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "membench/sizes.hpp"

namespace membench {
namespace {

std::string read_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace

std::size_t CacheTopology::last_level_size() const {
  return data_levels.empty() ? 0 : data_levels.back().size;
}

std::string CacheTopology::label_for(std::size_t bytes) const {
  for (const auto& c : data_levels)
    if (bytes <= c.size) return fmt::format("L{}", c.level);
  return "DRAM";
}

CacheTopology read_cache_topology(const std::string& dir) {
  namespace fs = std::filesystem;
  CacheTopology topo;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    topo.source = fmt::format("{} not found (no sysfs cache description)", dir);
    return topo;
  }
  topo.source = dir;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().filename().string().rfind("index", 0) != 0) continue;
    const std::string type = read_line(entry.path() / "type");
    if (type != "Data" && type != "Unified")
      continue;  // instruction caches do not hold our buffers
    CacheLevel c;
    try {
      c.level = std::stoi(read_line(entry.path() / "level"));
    } catch (const std::exception&) {
      continue;
    }
    const auto size = parse_size(read_line(entry.path() / "size"));
    if (!size) continue;
    c.size = size.value();
    if (const auto line = parse_size(read_line(entry.path() / "coherency_line_size")))
      c.line = line.value();
    c.shared_with = read_line(entry.path() / "shared_cpu_list");
    topo.data_levels.push_back(c);
  }
  std::sort(topo.data_levels.begin(), topo.data_levels.end(),
            [](const CacheLevel& a, const CacheLevel& b) { return a.level < b.level; });
  if (topo.data_levels.empty()) topo.source = fmt::format("{} lists no data caches", dir);
  return topo;
}

}  // namespace membench
