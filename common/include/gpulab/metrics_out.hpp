// --metrics-out FILE: the labs that end a run with Prometheus text for
// gpu-exporter's --textfile-dir. One flag, one help sentence, one writer, so
// every lab fails the same way (exit 2, "--metrics-out: <why>") and no
// half-written file is ever scraped.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "gpulab/prom_text.hpp"

// CLI11 costs ~9 s of CPU per translation unit that parses it; the labs' metrics writers
// only need the two names, so the flag's caller brings the header.
namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace gpulab {

// Adds the flag to `app`; `what` completes "Also write <what> as Prometheus text to FILE".
CLI::Option* add_metrics_out_flag(CLI::App& app, std::string& path, std::string_view what);

// Renders `metrics` and writes it atomically (gpulab::write_file). A failure is
// a UsageError "--metrics-out: <path>: <why>"; the old file is left intact.
void write_metrics_out(const std::filesystem::path& path, const prom::Exposition& metrics);

}  // namespace gpulab
