#include "kernels/matmul_model.hpp"

#include <gtest/gtest.h>

using namespace kernels;

TEST(MatmulModel, ArithmeticIntensityRisesWithTheTile) {
  EXPECT_DOUBLE_EQ(arithmetic_intensity(shape_of(MatmulKernel::kNaive)), 0.25);  // 2 FLOP per 8 B
  EXPECT_DOUBLE_EQ(arithmetic_intensity(shape_of(MatmulKernel::kTiled)), 8.0);   // x32
  EXPECT_DOUBLE_EQ(arithmetic_intensity(shape_of(MatmulKernel::kRect64x16)), 6.4);
  EXPECT_DOUBLE_EQ(arithmetic_intensity(shape_of(MatmulKernel::kMicro8x8)), 32.0);
}

TEST(MatmulModel, RegisterTilesCutSharedMemoryLoads) {
  EXPECT_DOUBLE_EQ(inner_loads_per_fma(shape_of(MatmulKernel::kTiled)), 2.0);
  EXPECT_DOUBLE_EQ(inner_loads_per_fma(shape_of(MatmulKernel::kMicro2x2)), 1.0);
  EXPECT_DOUBLE_EQ(inner_loads_per_fma(shape_of(MatmulKernel::kMicro8x8)), 0.25);
}

TEST(MatmulModel, CurriculumRooflineOnAT4) {
  const auto t4 = datasheet_roof("t4");
  ASSERT_TRUE(t4);
  // The curriculum's "0.04 TFLOP/s" counts an FMA as one FLOP; with two it is 0.08.
  EXPECT_NEAR(roofline_tflops(shape_of(MatmulKernel::kNaive), *t4), 0.08, 1e-12);
  EXPECT_NEAR(roofline_tflops(shape_of(MatmulKernel::kTiled), *t4), 2.56,
              1e-12);  // "past 1 TFLOP/s"
  EXPECT_DOUBLE_EQ(roofline_tflops(shape_of(MatmulKernel::kMicro8x8), *t4), 8.1);  // compute roof
  EXPECT_FALSE(datasheet_roof("v100"));
}

TEST(MatmulModel, FlopsAndNames) {
  EXPECT_DOUBLE_EQ(matmul_flops(1024), 2.0 * 1024 * 1024 * 1024);
  EXPECT_NEAR(tflops(1024, 1e-3), 2.147483648, 1e-9);
  EXPECT_EQ(parse_matmul_kernel("micro8x8_lb"), MatmulKernel::kMicro8x8Bounded);
  EXPECT_FALSE(parse_matmul_kernel("tiled16"));
  for (const auto& s : matmul_shapes()) {
    if (s.threads > 0) {
      EXPECT_EQ(s.threads % 32, 0) << s.name << ": whole warps";
    }
  }
}
