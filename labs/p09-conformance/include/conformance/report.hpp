// Everything one run found, and the three ways to print it: the human table,
// one JSON document (--json), and JUnit XML (--junit FILE) for CI systems,
// which show each case as a test, each undeclared capability as skipped and
// each declared-but-wrong case as a failure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "conformance/perf_tier.hpp"
#include "conformance/runner.hpp"
#include "gpulab/json.hpp"

namespace conformance {

struct RejectedBackend {
  std::string name;    // file name when the descriptor could not be read
  std::string reason;  // the loader's words
};

struct PerfEntry {
  std::optional<double> gflops;  // nullopt: not measured
  std::optional<double> ratio;   // gflops / roof
  Tier tier = Tier::kNotMeasured;
  std::string note;  // why not measured
};

struct PerfSummary {
  bool run = false;
  std::uint64_t size = 0;  // n of the n x n x n F32 matmul
  double threshold = 0.5;
  Roof roof;
  std::vector<PerfEntry> entries;  // parallel to Report::backends
};

struct Report {
  std::string core_abi;  // "2.2"
  std::uint64_t seed = 1;
  bool large = false;
  std::vector<std::pair<Op, DType>> capabilities;
  std::size_t cases_per_backend = 0;
  std::vector<BackendResult> backends;
  std::vector<RejectedBackend> rejected;
  PerfSummary perf;

  // "liar/F16/matmul" for each failed declared capability, in table order.
  [[nodiscard]] std::vector<std::string> failed_capabilities() const;
  [[nodiscard]] int passed_capabilities() const;
  [[nodiscard]] bool all_declared_pass() const { return failed_capabilities().empty(); }
};

// Fills report.perf.entries' tiers from the gflops and the roof.
void assign_tiers(Report& report);

struct TextOptions {
  bool every_failure = false;  // one FAIL line per failing case instead of per capability
};
std::string render_text(const Report& report, const TextOptions& opts = {});
gpulab::Json to_json(const Report& report);
std::string to_junit_xml(const Report& report);

// XML-escapes text for attributes and character data (& < > " '), and drops
// characters XML 1.0 cannot carry (control characters other than tab/LF/CR).
std::string xml_escape(std::string_view text);

}  // namespace conformance
