// The performance tier (curriculum Ch. 7, the "advanced tier"): a backend that
// is correct but uselessly slow must not carry the same badge as one that is
// correct and fast. Each conformant backend's F32 matmul throughput is
// compared with a reference — the `blas` backend (a vendor library on the same
// hardware) when it loaded and conforms, otherwise the machine's measured FMA
// roof — and labelled:
//   certified                  conformant and >= threshold of the reference
//   supported-not-recommended  conformant, but below the threshold
//   not certified              a declared capability failed (no speed makes up for wrong)
//   -                          not measured (unavailable, or no F32 matmul declared)
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace conformance {

enum class Tier : std::uint8_t {
  kCertified,
  kSupportedNotRecommended,
  kNotCertified,
  kNotMeasured
};
std::string_view name_of(Tier t);

// `ratio` = throughput / reference throughput (nullopt: not measured).
Tier classify_tier(bool conformant, std::optional<double> ratio, double threshold);

struct Roof {
  std::string label;  // "blas F32 matmul 256x256x256" or "FMA roof, 2 threads"
  double gflops = 0;
  // When the reference is OpenBLAS: the core it runs, judged against this CPU
  // (hal/openblas_core.hpp), so a misdetected peer that flatters every ratio is
  // said out loud. Empty otherwise.
  std::string peer;
  bool peer_fair = true;
};

// The machine's peak: independent multiply-add chains on `threads` threads for
// about `seconds`. What the CPU can do with no memory traffic at all — the
// roof when there is no vendor library to compare with.
double measure_fma_roof_gflops(unsigned threads, double seconds);

// 2*m*n*k / seconds / 1e9.
double matmul_gflops(std::uint64_t m, std::uint64_t n, std::uint64_t k, double seconds);

}  // namespace conformance
