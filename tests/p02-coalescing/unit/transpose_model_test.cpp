#include "coalescing/transpose_model.hpp"

#include <gtest/gtest.h>

#include "coalescing/report.hpp"

using namespace coalescing;

TEST(TransposeModel, LadderPredictions) {
  const auto m = transpose_models(8192);
  ASSERT_EQ(m.size(), 6u);
  EXPECT_EQ(m[0].name, "copy");
  EXPECT_DOUBLE_EQ(m[0].fraction_of_copy(), 1.0);
  EXPECT_EQ(m[1].store_sectors, 32u);                     // naive writes a column
  EXPECT_NEAR(m[1].fraction_of_copy(), 8.0 / 36, 1e-12);  // 22%: the curriculum's T4 measured 26%
  EXPECT_EQ(m[2].smem_load_conflict, 32);                 // tiled: conflicted read
  EXPECT_EQ(m[3].smem_load_conflict, 1);                  // padded: conflict-free
  EXPECT_DOUBLE_EQ(m[3].fraction_of_copy(), 1.0);
}

TEST(TransposeGate, NinetyPercentOfCopy) {
  auto row = [](std::string label, double gbs, bool ok = true) {
    Row r;
    r.label = std::move(label);
    r.gbs = gbs;
    r.ok = ok;
    return r;
  };
  EXPECT_TRUE(transpose_gate({row("copy", 100), row("tiled+pad", 94)}).pass);
  EXPECT_FALSE(transpose_gate({row("copy", 100), row("tiled+pad", 80)}).pass);
  EXPECT_FALSE(
      transpose_gate({row("copy", 100), row("tiled+pad", 99, false)}).pass);  // wrong is not fast
  EXPECT_FALSE(transpose_gate({row("copy", 100)}).evaluated);
}
