// The lab's canonical comparisons: the curriculum's policy table and gang
// demo, and one comparison per extension. Each returns the human table, the
// same numbers as JSON, and the checks its verdict lines come from.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cluster_sim/simulator.hpp"
#include "gpulab/json.hpp"

namespace cluster_sim {

// The scenario traces shipped in traces/ (built in; see CMakeLists.txt).
std::string_view embedded_trace(std::string_view name);
std::vector<Job> scenario_trace(std::string_view name);

struct Check {
  bool pass = false;
  std::string text;
};

struct Report {
  std::string text;
  gpulab::Json json;
  std::vector<Check> checks;
  [[nodiscard]] bool passed() const;
};

// Prints the reports (their text one after another, or --json: one document, an array when
// there are several) and returns exit 0 when every check passed, else 1.
int emit(const std::vector<Report>& reports, bool json);

// spread / first_fit / best_fit on 4 x 8 GPUs (the curriculum's table).
Report policy_comparison(const std::vector<Job>& jobs);
// Naive incremental grabbing vs atomic gang placement (best_fit) on 3 x 4 GPUs.
Report gang_comparison(const std::vector<Job>& jobs);
// Extension 1: no preemption vs preemption with a checkpoint penalty, 2 x 8 GPUs.
Report preemption_comparison(const std::vector<Job>& jobs, double checkpoint_penalty);
// Extension 2: FIFO vs DRF across tenants with GPU and CPU demands, 2 x 8 GPUs x 64 CPUs.
Report drf_comparison(const std::vector<Job>& jobs);
// Extension 3: first_fit / best_fit / topology_aware on 2 x 8 GPUs in 4-GPU NVLink islands.
Report topology_comparison(const std::vector<Job>& jobs, double island_penalty, double node_penalty);
// Extension 4: strict FIFO vs EASY backfill, 2 x 8 GPUs.
Report backfill_comparison(const std::vector<Job>& jobs);

// Extension 5: spread and best_fit, each alone, with a reserved whole-node pool
// for large jobs, with defragmentation, and with both, on one seeded synthetic
// trace (EASY backfill in every run, as a production queue would have).
struct FragmentationConfig {
  std::size_t jobs = 400;
  int nodes = 8;  // of 8 GPUs
  double load = 0.9;
  int reserve_nodes = 2;
  int large_gpus = 4;
  double checkpoint_penalty = 10;
  std::uint64_t seed = 1;
};
Report fragmentation_comparison(const FragmentationConfig& cfg);

// One run's summary as a table / JSON (for `cluster-sim run`).
std::string render_run(const SimConfig& cfg, const std::vector<Job>& jobs, const SimResult& r);
gpulab::Json run_json(const SimConfig& cfg, const std::vector<Job>& jobs, const SimResult& r);

}  // namespace cluster_sim
