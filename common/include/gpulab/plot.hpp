// `--plot FILE.svg`: line/scatter charts rendered by gnuplot (Debian's
// gnuplot-nox), not hand-drawn SVG. Throws gpulab::Unsupported when gnuplot is
// not installed, so a program exits 77 with the reason.
#pragma once

#include <string>
#include <vector>

namespace gpulab {

struct PlotSeries {
  std::string name;
  std::vector<double> x;
  std::vector<double> y;
  bool points = false;  // markers only (measurements) instead of a line
};

struct PlotSpec {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = false;
  bool log_y = false;
  std::vector<PlotSeries> series;
};

// The gnuplot script for `spec`, reading data from `data_path`; exposed for tests.
std::string gnuplot_script(const PlotSpec& spec, const std::string& data_path,
                           const std::string& svg_path);
void write_svg_plot(const PlotSpec& spec, const std::string& svg_path);

}  // namespace gpulab
