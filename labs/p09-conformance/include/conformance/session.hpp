// One conformance run end to end: load the backends through the HAL core,
// pick the ones to test, run the matrix on each, measure the performance
// tier, and return the Report the writers print.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "conformance/matrix.hpp"
#include "conformance/report.hpp"

namespace conformance {

struct SessionOptions {
  std::optional<std::filesystem::path>
      backend_dir;                // only this directory; else the HAL's discovery
  std::vector<std::string> only;  // test only these backends (empty: all)
  std::vector<std::string> skip;  // never these
  MatrixOptions matrix;
  bool perf = true;
  std::uint64_t perf_size = 256;  // n of the n x n x n F32 matmul
  int perf_reps = 3;
  double threshold = 0.5;          // fraction of the reference that earns "certified"
  std::string reference = "blas";  // the backend whose throughput is 100%
};

// Throws gpulab::UsageError for names that are neither loaded nor rejected,
// and for a --backend-dir that is not a directory; gpulab::RunError when no
// backend is left to test.
Report run_session(const SessionOptions& opts);

}  // namespace conformance
