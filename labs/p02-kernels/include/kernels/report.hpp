// The measured run of cuda-kernels: what to run, the rows it produced (each
// verified against the CPU reference), the performance gates, and the text and
// JSON renderings. Also the three device-free reports: the roofline model, the
// launch arithmetic and the build's ptxas register report.
#pragma once

#include <cstdint>
#include <gpulab/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kernels/device.hpp"
#include "kernels/launch_config.hpp"
#include "kernels/matmul_model.hpp"
#include "kernels/ptxas_report.hpp"
#include "kernels/tolerance.hpp"

namespace kernels {

struct MeasureOptions {
  int n = 1024;                           // matmul size (multiple of 128)
  std::uint64_t vec_n = 1ull << 26;       // vec_add elements
  std::size_t copy_bytes = 256ull << 20;  // copy-ceiling buffer
  TimingPlan plan;
  std::vector<std::string> kernels;  // empty: all
  bool tail_guard = true;
  bool exact_alloc = false;  // no canary slack: unguarded writes really go out of bounds
  bool drop_second_sync = false;
  Tolerance tolerance;  // --rtol; 0 demands bit equality with the CPU
  std::uint64_t seed = 1;
};

// Names --kernels accepts: vec_add and every matmul shape.
std::vector<std::string> kernel_names();
bool selected(const MeasureOptions& o, std::string_view name);

struct Row {
  std::string kernel;
  std::string check;  // "PASS", "FAIL: ..." or "n/a"
  bool ok = true;
  double event_median_ms = 0;
  double event_min_ms = 0;
  double chrono_enqueue_ms = 0;
  double gbs = 0;     // memory-bound rows
  double tflops = 0;  // matmul rows
  std::optional<KernelResources> resources;
};

struct Gate {
  std::string name;
  bool evaluated = false;  // false: a kernel it needs did not run
  bool pass = false;
  double value = 0;
  std::string detail;
};

struct MeasureReport {
  DeviceInfo device;
  MeasureOptions options;
  std::vector<Row> memory_rows;
  std::vector<Row> matmul_rows;
  std::vector<Gate> gates;
  std::vector<std::string> notes;
  [[nodiscard]] bool all_checks_pass() const;
  [[nodiscard]] bool all_gates_pass() const;
};

// Runs everything selected on the GPU (throws gpulab::Unsupported without one).
MeasureReport measure(const MeasureOptions& options);

// The gates, from the rows alone (exposed for tests).
std::vector<Gate> evaluate_gates(const std::vector<Row>& memory_rows,
                                 const std::vector<Row>& matmul_rows, int n);

std::string render(const MeasureReport& r);
gpulab::Json to_json(const MeasureReport& r);

std::string render_model(int n, const Roof& roof);
gpulab::Json model_json(int n, const Roof& roof);

std::string render_launch(const LaunchConfig& cfg, std::uint64_t elements);
gpulab::Json launch_json(const LaunchConfig& cfg, std::uint64_t elements);

std::string render_ptxas(const std::vector<PtxasEntry>& entries);
gpulab::Json ptxas_json(const std::vector<PtxasEntry>& entries);
// The report the build wrote, or "" when this build has none (no CUDA compiler).
std::string default_ptxas_report_path();

}  // namespace kernels
