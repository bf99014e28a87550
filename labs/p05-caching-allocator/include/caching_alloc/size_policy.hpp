// PyTorch's size rules (c10/cuda/CUDACachingAllocator.cpp), as pure functions:
// how a request is rounded, which pool serves it, how big a segment a miss asks
// the driver for, and when a cached block is split.
#pragma once

#include <bit>
#include <cstdint>
#include <string_view>

namespace caching_alloc {

inline constexpr std::uint64_t kMiB = 1024 * 1024;

inline constexpr std::uint64_t kMinBlockSize = 512;       // every size is a multiple of this
inline constexpr std::uint64_t kSmallSize = 1 * kMiB;     // largest "small" request
inline constexpr std::uint64_t kSmallBuffer = 2 * kMiB;   // small requests share 2 MiB segments
inline constexpr std::uint64_t kLargeBuffer = 20 * kMiB;  // 1-10 MiB requests share 20 MiB segments
inline constexpr std::uint64_t kMinLargeAlloc =
    10 * kMiB;                                          // from here a request gets its own segment
inline constexpr std::uint64_t kRoundLarge = 2 * kMiB;  // ...rounded up to 2 MiB

// Larger requests are refused outright (no GPU has 2^48 bytes), which also
// keeps every rounding below free of overflow.
inline constexpr std::uint64_t kMaxRequest = std::uint64_t{1} << 48;

enum class Pool : std::uint8_t { kSmall = 0, kLarge = 1 };
inline constexpr int kPools = 2;

constexpr std::string_view pool_name(Pool p) {
  return p == Pool::kSmall ? "small" : "large";
}

// 1 -> 512, 512 -> 512, 513 -> 1024: internal waste below 512 B buys reuse.
constexpr std::uint64_t round_size(std::uint64_t size) {
  if (size < kMinBlockSize) return kMinBlockSize;
  return kMinBlockSize * ((size + kMinBlockSize - 1) / kMinBlockSize);
}

// PyTorch uses <= 1 MiB for the small pool (the curriculum says "< 1 MB").
constexpr Pool pool_for(std::uint64_t rounded) {
  return rounded <= kSmallSize ? Pool::kSmall : Pool::kLarge;
}

// What a bin miss asks the driver for.
constexpr std::uint64_t segment_size(std::uint64_t rounded) {
  if (rounded <= kSmallSize) return kSmallBuffer;
  if (rounded < kMinLargeAlloc) return kLargeBuffer;
  return kRoundLarge * ((rounded + kRoundLarge - 1) / kRoundLarge);
}

// Small pool: any remainder of at least 512 B is worth keeping.
// Large pool: only remainders over 1 MiB (smaller ones stay as internal waste).
constexpr bool should_split(Pool pool, std::uint64_t block_size, std::uint64_t rounded) {
  const std::uint64_t remaining = block_size - rounded;
  return pool == Pool::kSmall ? remaining >= kMinBlockSize : remaining > kSmallSize;
}

// Bins are power-of-two size classes: 2^9 (512 B) ... 2^38, which is the
// curriculum's "1000 different sizes collapse to 30 size classes".
inline constexpr int kSizeClasses = 30;
constexpr int size_class(std::uint64_t size) {
  const int log2 = static_cast<int>(std::bit_width(size)) - 1;
  const int c = log2 - 9;
  return c < 0 ? 0 : (c >= kSizeClasses ? kSizeClasses - 1 : c);
}

}  // namespace caching_alloc
