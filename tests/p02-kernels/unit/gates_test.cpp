#include <gtest/gtest.h>

#include "kernels/report.hpp"

using namespace kernels;

namespace {
Row row(std::string k, double ms, double gbs = 0, double tf = 0, bool ok = true) {
  Row r;
  r.kernel = std::move(k);
  r.event_median_ms = ms;
  r.gbs = gbs;
  r.tflops = tf;
  r.ok = ok;
  return r;
}
}  // namespace

TEST(Gates, ComputedFromTheMeasuredRows) {
  const std::vector<Row> mem{row("copy", 1, 4000), row("vec_add", 1, 3600)};
  const std::vector<Row> mm{row("naive", 10, 0, 1), row("tiled", 2, 0, 5),
                            row("micro8x8", 1, 0, 10), row("cublas", 0.5, 0, 20)};
  const auto g = evaluate_gates(mem, mm, 4096);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_TRUE(g[0].pass);
  EXPECT_DOUBLE_EQ(g[0].value, 0.9);
  EXPECT_TRUE(g[1].pass);
  EXPECT_DOUBLE_EQ(g[1].value, 5.0);
  EXPECT_TRUE(g[2].pass);
  EXPECT_DOUBLE_EQ(g[2].value, 0.5);
}

TEST(Gates, FailWhenSlowOrWrongAndStayUnevaluatedWhenNotRun) {
  const std::vector<Row> mem{row("copy", 1, 4000), row("vec_add", 1, 3000)};
  const std::vector<Row> mm{row("naive", 3, 0, 1), row("tiled", 1, 0, 3, /*ok=*/false)};
  const auto g = evaluate_gates(mem, mm, 1024);
  EXPECT_FALSE(g[0].pass);       // 75% of copy
  EXPECT_FALSE(g[1].pass);       // fast but wrong does not pass
  EXPECT_FALSE(g[2].evaluated);  // no cuBLAS row
  EXPECT_FALSE(evaluate_gates({}, {}, 1024)[0].evaluated);
}
