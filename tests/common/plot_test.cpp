#include "gpulab/plot.hpp"

#include <gtest/gtest.h>

TEST(Plot, ScriptNamesEverySeriesAndQuotesTitles) {
  gpulab::PlotSpec spec;
  spec.title = "it's a curve";
  spec.log_x = true;
  spec.series = {{"latency", {1, 2}, {3, 4}, false}, {"L1", {1}, {1}, true}};
  const auto s = gpulab::gnuplot_script(spec, "/tmp/d.txt", "/tmp/o.svg");
  EXPECT_NE(s.find("set title 'it''s a curve'"), std::string::npos) << s;
  EXPECT_NE(s.find("index 0 using 1:2 with linespoints"), std::string::npos) << s;
  EXPECT_NE(s.find("index 1 using 1:2 with points"), std::string::npos) << s;
  EXPECT_NE(s.find("set logscale x 2"), std::string::npos);
  EXPECT_NE(s.find("set output '/tmp/o.svg'"), std::string::npos);
}
