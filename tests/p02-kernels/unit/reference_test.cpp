#include "kernels/reference.hpp"

#include <gtest/gtest.h>

using namespace kernels;

TEST(Reference, VecAdd) {
  const std::vector<float> a{1, 2, 3, 99}, b{10, 20, 30, 99};
  EXPECT_EQ(cpu_vec_add(a, b, 3), (std::vector<float>{11, 22, 33}));
}

TEST(Reference, MatmulRowsOfAKnownProduct) {
  // [1 2; 3 4] * [5 6; 7 8] = [19 22; 43 50]
  const std::vector<float> a{1, 2, 3, 4}, b{5, 6, 7, 8};
  const std::vector<std::size_t> all{0, 1}, second{1};
  EXPECT_EQ(cpu_matmul_rows(a, b, 2, all), (std::vector<float>{19, 22, 43, 50}));
  EXPECT_EQ(cpu_matmul_rows(a, b, 2, second), (std::vector<float>{43, 50}));
  EXPECT_EQ(gather_rows(std::vector<float>{19, 22, 43, 50}, 2, second),
            (std::vector<float>{43, 50}));
}

TEST(Reference, RowsToVerify) {
  EXPECT_EQ(rows_to_verify(1024).size(), 1024u);
  const auto rows = rows_to_verify(4096);
  EXPECT_EQ(rows.size(), 64u);
  EXPECT_EQ(rows.front(), 0u);
  EXPECT_EQ(rows.back(), 4095u);
}

TEST(Reference, SeededInputsRepeatAndStayInUnitInterval) {
  const auto x = random_values(1000, 7), y = random_values(1000, 7), z = random_values(1000, 8);
  EXPECT_EQ(x, y);
  EXPECT_NE(x, z);
  for (float v : x) {
    EXPECT_GE(v, 0.0f);
    EXPECT_LT(v, 1.0f);
  }
}
