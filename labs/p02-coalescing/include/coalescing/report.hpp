// coalescing-bench's runs and reports: the analytic model alone (no GPU), and
// the measured tables with the model's prediction next to every row.
#pragma once

#include <gpulab/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "coalescing/device.hpp"

namespace coalescing {

inline const std::vector<int> kStrides{1, 2, 4, 8, 16, 32};

struct BenchOptions {
  std::size_t buffer_mb = 256;  // stride and float4 buffers; AoS uses buffer_mb of x values
  int transpose_n = 8192;       // 256 MiB per matrix: far beyond a 50 MB L2
  Plan plan;
  std::vector<std::string> only;  // sections: stride, aos, float4, transpose; empty = all
};
bool section_selected(const BenchOptions& o, std::string_view section);
inline const std::vector<std::string> kSections{"stride", "aos", "float4", "transpose"};

struct Row {
  std::string label;
  bool ok = false;
  std::string mismatch;
  double median_ms = 0;
  double gbs = 0;               // effective: useful bytes / time
  double model_gbs = 0;         // the model's prediction, scaled from the row it is relative to
  std::string model_note;       // sectors/request etc., as printed
  double fraction_of_copy = 0;  // transpose rows
  double model_fraction = 0;
  int registers = 0, blocks_per_sm = 0, threads_per_block = 0;
  double occupancy = 0;
  bool skipped = false;  // e.g. cp.async below sm_80
  std::string skip_reason;
};

struct Gate {
  std::string name;
  bool evaluated = false;
  bool pass = false;
  std::string detail;
};

struct BenchReport {
  DeviceInfo device;
  BenchOptions options;
  std::vector<Row> stride, aos, vector_copy, transpose;
  std::vector<Gate> gates;
  [[nodiscard]] bool all_checks_pass() const;
  [[nodiscard]] bool all_gates_pass() const;
};

BenchReport run_bench(const BenchOptions& options);
// The padded-transpose gate from the rows alone (exposed for tests).
Gate transpose_gate(const std::vector<Row>& transpose_rows);

std::string render(const BenchReport& r);
gpulab::Json to_json(const BenchReport& r);

std::string render_model(int transpose_n);
gpulab::Json model_json(int transpose_n);

}  // namespace coalescing
