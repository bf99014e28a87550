// Global-memory coalescing as arithmetic: a warp's load or store is served as
// one transaction per distinct 32-byte sector its 32 addresses touch. Counting
// sectors predicts the stride cliff and the AoS penalty before anything runs.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace coalescing {

inline constexpr int kWarpSize = 32;
inline constexpr std::uint64_t kSectorBytes = 32;

// Byte addresses of the 32 lanes when lane l accesses element base + l * stride.
std::vector<std::uint64_t> warp_addresses(std::uint64_t stride_elems, std::uint64_t elem_bytes,
                                          std::uint64_t base = 0);

// Distinct sectors touched when every lane accesses `access_bytes` at its address.
std::size_t distinct_sectors(std::span<const std::uint64_t> addresses, std::uint64_t access_bytes,
                             std::uint64_t sector_bytes = kSectorBytes);

struct AccessModel {
  std::size_t sectors = 0;          // per warp request
  std::uint64_t useful_bytes = 0;   // bytes the lanes asked for
  std::uint64_t fetched_bytes = 0;  // sectors * 32
  [[nodiscard]] double efficiency() const {
    return fetched_bytes ? static_cast<double>(useful_bytes) / static_cast<double>(fetched_bytes)
                         : 0.0;
  }
};

// A warp reading consecutive-thread elements `stride` apart: 4, 8, 16, 32, 32, 32
// sectors for 4-byte floats at strides 1, 2, 4, 8, 16, 32.
AccessModel strided_access(std::uint64_t stride_elems, std::uint64_t elem_bytes = 4);
// Loading one 4-byte field of a `struct_bytes` structure per lane (AoS): 12 sectors for {x,y,z}.
AccessModel aos_field_access(std::uint64_t struct_bytes, std::uint64_t field_bytes = 4);

// Predicted effective bandwidth relative to the coalesced case: the ratio of
// useful-bytes efficiencies (DRAM moves whole sectors, nothing else modelled).
double predicted_relative_bandwidth(const AccessModel& access, const AccessModel& coalesced);

}  // namespace coalescing
