#include "gpulab/metrics_out.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "gpulab/cli.hpp"

namespace gpulab {

CLI::Option* add_metrics_out_flag(CLI::App& app, std::string& path, std::string_view what) {
  return app.add_option("--metrics-out", path,
                        fmt::format("Also write {} as Prometheus text to FILE, atomically (for gpu-exporter "
                                    "--textfile-dir)",
                                    what));
}

void write_metrics_out(const std::filesystem::path& path, const prom::Exposition& metrics) {
  try {
    prom::write_file_atomic(path, metrics.render());
  } catch (const std::runtime_error& e) {
    throw UsageError(fmt::format("--metrics-out: {}", e.what()));
  }
}

}  // namespace gpulab
