#include "coalescing/stride_plot.hpp"

#include <gtest/gtest.h>

#include <gpulab/errors.hpp>

using namespace coalescing;

TEST(StridePlot, ModelAloneAndWithAMeasuredRun) {
  const auto model_only = stride_plot(nullptr);
  ASSERT_EQ(model_only.series.size(), 1u);
  EXPECT_EQ(model_only.series[0].y.back(), 0.125);  // the model's floor at stride 32

  const auto doc = gpulab::Json::parse(
      R"({"stride": [{"label": "1", "gbs": 200.0}, {"label": "32", "gbs": 8.0}]})");
  const auto spec = stride_plot(&doc);
  ASSERT_EQ(spec.series.size(), 2u);
  EXPECT_EQ(spec.series[1].x, (std::vector<double>{1, 32}));
  EXPECT_EQ(spec.series[1].y, (std::vector<double>{1.0, 0.04}));  // normalised to stride 1
}

TEST(StridePlot, RejectsDocumentsThatAreNotASweep) {
  for (const char* text :
       {R"([])", R"({"stride": []})", R"({"stride": [{"label": "x", "gbs": 1}]})",
        R"({"stride": [{"label": "2", "gbs": 1}]})", R"({"transpose": []})"}) {
    const auto doc = gpulab::Json::parse(text);
    EXPECT_THROW(stride_plot(&doc), gpulab::UsageError) << text;
  }
}
