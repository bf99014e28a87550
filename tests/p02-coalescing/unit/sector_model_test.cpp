#include "coalescing/sector_model.hpp"

#include <gtest/gtest.h>

using namespace coalescing;

TEST(SectorModel, StrideSweepSectorsPerRequest) {
  // The curriculum's table: 4/8/16/32/32/32 sectors for strides 1..32 of 4-byte floats.
  const int strides[] = {1, 2, 4, 8, 16, 32};
  const std::size_t sectors[] = {4, 8, 16, 32, 32, 32};
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(strided_access(static_cast<std::uint64_t>(strides[i])).sectors, sectors[i])
        << "stride " << strides[i];
}

TEST(SectorModel, CliffFlattensAtOneSectorPerElement) {
  const AccessModel c = strided_access(1);
  EXPECT_DOUBLE_EQ(predicted_relative_bandwidth(strided_access(2), c), 0.5);
  EXPECT_DOUBLE_EQ(predicted_relative_bandwidth(strided_access(8), c), 0.125);
  EXPECT_DOUBLE_EQ(predicted_relative_bandwidth(strided_access(32), c),
                   0.125);  // no further: 1 float per sector
}

TEST(SectorModel, AosLoadingOneFieldCostsThreeTimes) {
  const AccessModel aos = aos_field_access(12);
  EXPECT_EQ(aos.sectors, 12u);  // 32 lanes x 12 B = 384 B
  EXPECT_DOUBLE_EQ(1.0 / predicted_relative_bandwidth(aos, strided_access(1)), 3.0);
}

TEST(SectorModel, MisalignmentAndWideAccesses) {
  // A coalesced warp starting mid-sector straddles one more sector.
  EXPECT_EQ(distinct_sectors(warp_addresses(1, 4, 16), 4), 5u);
  // float4: 32 lanes x 16 B = 512 B = 16 sectors, all of it useful.
  EXPECT_EQ(distinct_sectors(warp_addresses(4, 4), 16), 16u);
  // Every lane on the same address: one sector (broadcast).
  EXPECT_EQ(distinct_sectors(warp_addresses(0, 4), 4), 1u);
  EXPECT_THROW(strided_access(0), std::invalid_argument);
}
