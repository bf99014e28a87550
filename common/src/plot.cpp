#include "gpulab/plot.hpp"

#include <fmt/core.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <utility>

#include "gpulab/errors.hpp"
#include "gpulab/file.hpp"
#include "gpulab/output_file.hpp"

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
  if (auto ok = check_output_path(svg_path); !ok) throw RunError(ok.error().message);
  namespace fs = std::filesystem;
  char dir_template[] = "/tmp/gpulab-plot-XXXXXX";
  if (!mkdtemp(dir_template)) throw RunError("cannot create a temporary directory for the plot");
  struct RemoveDir {
    fs::path dir;
    ~RemoveDir() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } scratch{dir_template};
  const auto data = (scratch.dir / "data.txt").string();
  const auto script = (scratch.dir / "plot.gp").string();
  // gnuplot draws into the scratch directory and the picture reaches svg_path through
  // write_file: gnuplot itself exits 0 after writing to a full disk or /dev/full.
  const auto drawn = (scratch.dir / "plot.svg").string();
  std::string points;
  for (const auto& series : spec.series) {  // gnuplot datasets are separated by two blank lines
    for (std::size_t i = 0; i < series.x.size() && i < series.y.size(); ++i)
      points += fmt::format("{:.17g} {:.17g}\n", series.x[i], series.y[i]);
    points += "\n\n";
  }
  for (const auto& [path, text] :
       {std::pair{data, points}, std::pair{script, gnuplot_script(spec, data, drawn)}}) {
    if (auto ok = write_file(path, text); !ok) throw RunError(ok.error().message);
  }
  const auto err_path = (scratch.dir / "err.txt").string();
  const int rc =
      std::system(fmt::format("gnuplot {} 2>{}", quoted(script), quoted(err_path)).c_str());
  if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) != 0) {
    std::string err = read_text_file(err_path, 64 * 1024).value_or("");
    err = err.substr(0, err.find('\n'));
    throw RunError(fmt::format("gnuplot failed to draw {}: {}", svg_path, err));
  }
  auto svg = read_text_file(drawn, std::size_t{256} << 20);
  // A picture gnuplot could not finish (scratch space full) lacks its closing tag.
  if (!svg || svg.value().find("</svg>") == std::string::npos) {
    throw RunError(fmt::format("gnuplot did not finish drawing {}", svg_path));
  }
  if (auto ok = write_file(svg_path, svg.value()); !ok) throw RunError(ok.error().message);
}

}  // namespace gpulab
