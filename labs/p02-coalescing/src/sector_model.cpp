#include "coalescing/sector_model.hpp"

#include <algorithm>
#include <stdexcept>

namespace coalescing {

std::vector<std::uint64_t> warp_addresses(std::uint64_t stride_elems, std::uint64_t elem_bytes,
                                          std::uint64_t base) {
  std::vector<std::uint64_t> a(kWarpSize);
  for (int lane = 0; lane < kWarpSize; ++lane)
    a[static_cast<std::size_t>(lane)] =
        base + static_cast<std::uint64_t>(lane) * stride_elems * elem_bytes;
  return a;
}

std::size_t distinct_sectors(std::span<const std::uint64_t> addresses, std::uint64_t access_bytes,
                             std::uint64_t sector_bytes) {
  if (access_bytes == 0 || sector_bytes == 0)
    throw std::invalid_argument("distinct_sectors: sizes must be > 0");
  std::vector<std::uint64_t> sectors;
  for (std::uint64_t a : addresses)
    for (std::uint64_t s = a / sector_bytes; s <= (a + access_bytes - 1) / sector_bytes; ++s)
      sectors.push_back(s);
  std::sort(sectors.begin(), sectors.end());
  return static_cast<std::size_t>(std::unique(sectors.begin(), sectors.end()) - sectors.begin());
}

namespace {
AccessModel model_of(const std::vector<std::uint64_t>& addresses, std::uint64_t access_bytes) {
  AccessModel m;
  m.sectors = distinct_sectors(addresses, access_bytes);
  m.useful_bytes = addresses.size() * access_bytes;
  m.fetched_bytes = m.sectors * kSectorBytes;
  return m;
}
}  // namespace

AccessModel strided_access(std::uint64_t stride_elems, std::uint64_t elem_bytes) {
  if (stride_elems == 0) throw std::invalid_argument("strided_access: stride must be >= 1");
  return model_of(warp_addresses(stride_elems, elem_bytes), elem_bytes);
}

AccessModel aos_field_access(std::uint64_t struct_bytes, std::uint64_t field_bytes) {
  if (field_bytes > struct_bytes)
    throw std::invalid_argument("aos_field_access: field larger than the struct");
  return model_of(warp_addresses(1, struct_bytes), field_bytes);
}

double predicted_relative_bandwidth(const AccessModel& access, const AccessModel& coalesced) {
  const double c = coalesced.efficiency();
  return c > 0 ? access.efficiency() / c : 0.0;
}

}  // namespace coalescing
