#include "blocking.hpp"

#include <unistd.h>

#include <algorithm>

#include "micro_kernel.hpp"

namespace fast_backend {
namespace {

std::uint64_t cache_size(int name) {
  const long v = sysconf(name);
  return v > 0 ? static_cast<std::uint64_t>(v) : 0;
}

std::uint64_t round_down(std::uint64_t v, std::uint64_t unit) {
  return v / unit * unit;
}

}  // namespace

CacheSizes this_cpu_caches() {
  return {cache_size(_SC_LEVEL1_DCACHE_SIZE), cache_size(_SC_LEVEL2_CACHE_SIZE),
          cache_size(_SC_LEVEL3_CACHE_SIZE)};
}

Blocking blocking_for(const CacheSizes& caches, const Tile& tile) {
  constexpr std::uint64_t kFloat = sizeof(float);
  const std::uint64_t l1 = caches.l1d ? caches.l1d : 32 * 1024;
  const std::uint64_t l2 = caches.l2 ? caches.l2 : 512 * 1024;
  const std::uint64_t l3 = caches.l3 ? caches.l3 : 8 * 1024 * 1024;
  Blocking b{};
  b.kc = std::clamp<std::uint64_t>(round_down(l1 / 2 / (tile.nr * kFloat), 8), 64, 1024);
  b.mc = std::clamp<std::uint64_t>(round_down(l2 / 2 / (b.kc * kFloat), tile.mr), 4 * tile.mr,
                                   round_down(1020, tile.mr));
  b.nc = std::clamp<std::uint64_t>(round_down(l3 / 4 / (b.kc * kFloat), tile.nr), 16 * tile.nr, 8192);
  return b;
}

}  // namespace fast_backend
