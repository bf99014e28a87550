#include "kernels/roofline_plot.hpp"

#include <gtest/gtest.h>

#include <gpulab/errors.hpp>

using namespace kernels;

TEST(RooflinePlot, RoofModelAndMeasuredPoints) {
  const Roof h200 = *datasheet_roof("h200");
  const auto doc = gpulab::Json::parse(
      R"({"matmul": [{"kernel": "naive", "tflops": 1.5}, {"kernel": "micro8x8", "tflops": 30.0},
                     {"kernel": "cublas", "tflops": 50.0}]})");
  const auto spec = roofline_plot(h200, &doc);
  ASSERT_EQ(spec.series.size(), 3u);
  EXPECT_DOUBLE_EQ(*std::max_element(spec.series[0].y.begin(), spec.series[0].y.end()),
                   67.0);  // compute roof
  EXPECT_EQ(spec.series[2].x,
            (std::vector<double>{0.25, 32.0}));  // cuBLAS has no modelled intensity
  EXPECT_EQ(spec.series[2].y, (std::vector<double>{1.5, 30.0}));
  EXPECT_EQ(roofline_plot(h200, nullptr).series.size(), 2u);
}

TEST(RooflinePlot, RejectsDocumentsThatAreNotARun) {
  const Roof t4 = *datasheet_roof("t4");
  for (const char* text : {R"(42)", R"({"memory": []})", R"({"matmul": [{"kernel": "naive"}]})",
                           R"({"matmul": [{"kernel": "bogus", "tflops": 1}]})"}) {
    const auto doc = gpulab::Json::parse(text);
    EXPECT_THROW(roofline_plot(t4, &doc), gpulab::UsageError) << text;
  }
}
