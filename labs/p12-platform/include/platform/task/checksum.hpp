// FNV-1a over raw bytes: the weights checksum ranks compare every step and the
// integrity word of a checkpoint file. Not cryptographic; it catches torn
// writes, bit flips and ranks whose weights drifted apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace gpulab::platform::task {

inline constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ULL;

// Continues a running hash (start with kFnvOffset).
std::uint64_t fnv1a64(std::span<const std::byte> bytes, std::uint64_t hash = kFnvOffset);

template <class T>
std::uint64_t fnv1a64_of(std::span<const T> values, std::uint64_t hash = kFnvOffset) {
  return fnv1a64(std::as_bytes(values), hash);
}

// 16 lowercase hex digits: how checksums appear in JSON (a JSON number cannot
// hold 64 bits exactly).
std::string hex64(std::uint64_t value);

}  // namespace gpulab::platform::task
