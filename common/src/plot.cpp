#include "gpulab/plot.hpp"

#include <fmt/core.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "gpulab/cli.hpp"

namespace gpulab {
namespace {

// gnuplot strings are single-quoted; a quote inside is doubled.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += (c == '\'') ? std::string("''") : std::string(1, c);
  return out + "'";
}

bool gnuplot_available() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

}  // namespace

std::string gnuplot_script(const PlotSpec& spec, const std::string& data_path,
                           const std::string& svg_path) {
  std::string s;
  s += "set terminal svg size 900,560 dynamic enhanced font 'sans,12' background '#ffffff'\n";
  s += fmt::format("set output {}\n", quoted(svg_path));
  s += fmt::format("set title {} noenhanced\n", quoted(spec.title));
  s += fmt::format("set xlabel {} noenhanced\n", quoted(spec.x_label));
  s += fmt::format("set ylabel {} noenhanced\n", quoted(spec.y_label));
  s += "set grid\nset key top left noenhanced\n";
  if (spec.log_x) s += "set logscale x 2\n";
  if (spec.log_y) s += "set logscale y 10\n";
  s += "plot ";
  for (std::size_t i = 0; i < spec.series.size(); ++i) {
    if (i) s += ", \\\n     ";
    s += fmt::format("{} index {} using 1:2 with {} title {}", quoted(data_path), i,
                     spec.series[i].points ? "points pt 7" : "linespoints pt 7 ps 0.5",
                     quoted(spec.series[i].name));
  }
  return s + "\n";
}

void write_svg_plot(const PlotSpec& spec, const std::string& svg_path) {
  if (!gnuplot_available()) throw Unsupported("--plot needs gnuplot (apt-get install gnuplot-nox)");
  namespace fs = std::filesystem;
  char dir_template[] = "/tmp/gpulab-plot-XXXXXX";
  if (!mkdtemp(dir_template)) throw RunError("cannot create a temporary directory for the plot");
  const fs::path dir = dir_template;
  const auto data = (dir / "data.txt").string();
  const auto script = (dir / "plot.gp").string();
  {
    std::ofstream out(data);
    for (const auto& series : spec.series) {  // gnuplot datasets are separated by two blank lines
      for (std::size_t i = 0; i < series.x.size() && i < series.y.size(); ++i)
        out << fmt::format("{:.17g} {:.17g}\n", series.x[i], series.y[i]);
      out << "\n\n";
    }
    std::ofstream(script) << gnuplot_script(spec, data, svg_path);
  }
  const int rc = std::system(fmt::format("gnuplot {} 2>{}", quoted(script), quoted((dir / "err.txt").string())).c_str());
  std::string err;
  if (rc != 0) {
    std::ifstream in(dir / "err.txt");
    std::getline(in, err);
  }
  fs::remove_all(dir);
  if (rc != 0) throw RunError(fmt::format("gnuplot failed to write {}: {}", svg_path, err));
}

}  // namespace gpulab
