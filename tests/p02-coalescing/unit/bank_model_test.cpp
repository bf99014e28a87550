#include "coalescing/bank_model.hpp"

#include <gtest/gtest.h>

using namespace coalescing;

TEST(BankModel, BankOfAnAddress) {
  EXPECT_EQ(bank_of(0), 0);
  EXPECT_EQ(bank_of(4), 1);
  EXPECT_EQ(bank_of(124), 31);
  EXPECT_EQ(bank_of(128), 0);  // word 32 wraps to bank 0
}

TEST(BankModel, ColumnOfA32WideTileIsA32WayConflict) {
  EXPECT_EQ(conflict_degree(tile_column_addresses(32, 0)), 32);
  EXPECT_EQ(transpose_read_conflict(32), 32);
}

TEST(BankModel, PaddingTo33MakesTheColumnConflictFree) {
  // Element (r, c) of float[32][33] lives in bank (r + c) mod 32.
  const auto addr = tile_column_addresses(33, 5);
  for (int lane = 0; lane < 32; ++lane)
    EXPECT_EQ(bank_of(addr[static_cast<std::size_t>(lane)]), (lane + 5) % 32);
  EXPECT_EQ(transpose_read_conflict(33), 1);
}

TEST(BankModel, RowsAndBroadcastsAreFree) {
  EXPECT_EQ(conflict_degree(tile_row_addresses(32, 7)), 1);
  const std::vector<std::uint64_t> same(32, 256);
  EXPECT_EQ(conflict_degree(same), 1);        // one word, broadcast
  EXPECT_EQ(transpose_read_conflict(34), 2);  // an even pad still pairs rows up
}
