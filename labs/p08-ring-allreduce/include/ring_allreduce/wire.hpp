// The wire format every rank agrees on: IEEE-754 binary64/binary32, little
// endian, no framing. On a little-endian host the in-memory array already is
// the wire format, so the collectives send and receive in place; a big-endian
// host byte-swaps through these helpers.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string_view>
#include <vector>

namespace ring {

enum class DType { kF64, kF32 };

std::string_view dtype_name(DType t);  // "double" / "float" (nccl-tests' names)
std::size_t dtype_size(DType t);

inline constexpr bool kWireIsNative = std::endian::native == std::endian::little;

template <class T>
concept WireFloat = (std::same_as<T, double> || std::same_as<T, float>) && std::numeric_limits<T>::is_iec559;

template <WireFloat T>
using WireBits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;

// One element from its little-endian bytes.
template <WireFloat T>
inline T load_le(const std::byte* p) {
  WireBits<T> bits = 0;
  if constexpr (kWireIsNative) {
    std::memcpy(&bits, p, sizeof bits);
  } else {
    for (std::size_t i = 0; i < sizeof bits; ++i)
      bits |= static_cast<WireBits<T>>(std::to_integer<unsigned>(p[i])) << (8 * i);
  }
  return std::bit_cast<T>(bits);
}

// One element to its little-endian bytes.
template <WireFloat T>
inline void store_le(T value, std::byte* p) {
  const auto bits = std::bit_cast<WireBits<T>>(value);
  if constexpr (kWireIsNative) {
    std::memcpy(p, &bits, sizeof bits);
  } else {
    for (std::size_t i = 0; i < sizeof bits; ++i) p[i] = static_cast<std::byte>((bits >> (8 * i)) & 0xFF);
  }
}

// The bytes to send for `values`: the array itself on a little-endian host,
// otherwise an encoded copy in `staging`.
template <WireFloat T>
inline std::span<const std::byte> as_wire(std::span<const T> values, std::vector<std::byte>& staging) {
  if constexpr (kWireIsNative) {
    return std::as_bytes(values);
  } else {
    staging.resize(values.size_bytes());
    for (std::size_t i = 0; i < values.size(); ++i) store_le(values[i], staging.data() + i * sizeof(T));
    return staging;
  }
}

// After receiving wire bytes straight into `values`: decode in place (no-op on little-endian hosts).
template <WireFloat T>
inline void from_wire_inplace(std::span<T> values) {
  if constexpr (!kWireIsNative) {
    for (T& v : values) v = load_le<T>(reinterpret_cast<const std::byte*>(&v));
  }
}

// Before sending `values` in place: encode them in place (no-op on little-endian hosts).
template <WireFloat T>
inline void to_wire_inplace(std::span<T> values) {
  if constexpr (!kWireIsNative) {
    for (T& v : values) {
      const T x = v;
      store_le(x, reinterpret_cast<std::byte*>(&v));
    }
  }
}

}  // namespace ring
