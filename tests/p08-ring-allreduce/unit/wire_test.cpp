#include "ring_allreduce/wire.hpp"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace {

TEST(Wire, DoublesAreLittleEndianBinary64) {
  std::array<std::byte, 8> b{};
  ring::store_le(1.0, b.data());  // 0x3FF0000000000000
  EXPECT_EQ(b[7], std::byte{0x3F});
  EXPECT_EQ(b[6], std::byte{0xF0});
  for (int i = 0; i < 6; ++i) EXPECT_EQ(b[i], std::byte{0});
  EXPECT_EQ(ring::load_le<double>(b.data()), 1.0);
}

TEST(Wire, FloatsAreLittleEndianBinary32) {
  std::array<std::byte, 4> b{};
  ring::store_le(-2.5f, b.data());  // 0xC0200000
  EXPECT_EQ(b[3], std::byte{0xC0});
  EXPECT_EQ(b[2], std::byte{0x20});
  EXPECT_EQ(ring::load_le<float>(b.data()), -2.5f);
}

TEST(Wire, AsWireRoundTripsThroughBytes) {
  const std::vector<double> v{0.1, -3.0, 1e300};
  std::vector<std::byte> staging;
  const auto bytes = ring::as_wire<double>(v, staging);
  ASSERT_EQ(bytes.size(), 24u);
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_EQ(ring::load_le<double>(bytes.data() + 8 * i), v[i]);
}

}  // namespace
