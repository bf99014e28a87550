#include "gpulab/plot.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "gpulab/errors.hpp"
#include "gpulab_test/hostile_fs.hpp"

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

TEST(Plot, DrawsTheSvgAndReplacesTheOldOne) {
  gpulab_test::ScratchDir dir;
  const auto svg = dir / "plot.svg";
  gpulab_test::put(svg, "old picture");
  gpulab::PlotSpec spec;
  spec.title = "t";
  spec.series = {{"s", {1, 2, 3}, {1, 4, 9}, false}};
  gpulab::write_svg_plot(spec, svg.string());  // gnuplot-nox is in tools/packages.txt
  const std::string drawn = gpulab_test::slurp(svg);
  EXPECT_EQ(drawn.rfind("<?xml", 0), 0U) << drawn.substr(0, 80);
  EXPECT_NE(drawn.find("</svg>"), std::string::npos);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
  EXPECT_THROW(gpulab::write_svg_plot(spec, dir.path().string()), gpulab::RunError);
}
