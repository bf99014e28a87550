#include "ring_allreduce/memory_budget.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <iterator>
#include <limits>

namespace ring {
namespace {

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<std::uint64_t>::max() : r;
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  return __builtin_add_overflow(a, b, &r) ? std::numeric_limits<std::uint64_t>::max() : r;
}

}  // namespace

std::uint64_t MemoryNeed::per_rank(int world) const {
  return saturating_add(fixed, saturating_mul(per_peer, static_cast<std::uint64_t>(world)));
}

std::uint64_t MemoryNeed::total(int world) const {
  return saturating_mul(per_rank(world), static_cast<std::uint64_t>(world));
}

std::uint64_t available_memory_bytes() {
  // /proc/meminfo is the kernel's, not a user file: a fixed-size line read.
  if (std::FILE* f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    unsigned long long kib = 0;
    bool found = false;
    while (!found && std::fgets(line, sizeof line, f) != nullptr)
      found = std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1;
    std::fclose(f);
    if (found) return saturating_mul(kib, 1024);
  }
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? saturating_mul(static_cast<std::uint64_t>(pages),
                                                static_cast<std::uint64_t>(page))
                               : std::numeric_limits<std::uint64_t>::max();
}

std::string format_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
  auto v = static_cast<double>(bytes);
  std::size_t u = 0;
  while (v >= 1000 && u + 1 < std::size(units)) {
    v /= 1000;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, units[u]);
}

std::string memory_problem(int world, const MemoryNeed& need, std::uint64_t available) {
  const std::uint64_t total = need.total(world);
  if (total <= available) return {};
  return fmt::format("this run needs about {} ({} ranks x {} each), more than the {} this machine has available",
                     format_bytes(total), world, format_bytes(need.per_rank(world)), format_bytes(available));
}

}  // namespace ring
