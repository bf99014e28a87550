#include "cluster_sim/commands.hpp"

#include <fmt/format.h>

#include <sstream>

#include "cluster_sim/inventory.hpp"
#include "cluster_sim/placement.hpp"
#include "gpulab/errors.hpp"

namespace cluster_sim {

RunOutcome run_trace(const RunRequest& request) {
  RunOutcome out;
  SimConfig& cfg = out.cfg;
  cfg = request.cfg;
  cfg.policy = parse_policy(request.policy);
  cfg.gang = request.gang;
  if (request.queue == "drf") {
    cfg.order = QueueOrder::kDrf;
  } else if (request.queue != "fifo") {
    throw gpulab::UsageError(fmt::format("unknown queue '{}' (use fifo or drf)", request.queue));
  }
  if (cfg.checkpoint_penalty < 0) throw gpulab::UsageError("--checkpoint-penalty must be >= 0");
  if (cfg.island_penalty < 1 || cfg.node_penalty < 1)
    throw gpulab::UsageError("--island-penalty and --node-penalty must be >= 1");
  if (cfg.backfill_depth < 1) throw gpulab::UsageError("--backfill-depth must be >= 1");
  if (!request.inventory_path.empty()) apply(load_inventory_shape(request.inventory_path), cfg);
  if (request.generate > 0) {
    GeneratorConfig g;
    g.jobs = request.generate;
    g.nodes = cfg.nodes;
    g.gpus_per_node = cfg.gpus_per_node;
    g.seed = request.seed;
    out.jobs = generate_trace(g);
  } else if (!request.trace_path.empty()) {
    out.jobs = load_trace(request.trace_path);
  } else {
    throw gpulab::UsageError("run needs --trace FILE or --generate N");
  }
  out.result = simulate(out.jobs, cfg);
  return out;
}

std::string generated_trace_csv(const GeneratorConfig& cfg) {
  std::ostringstream trace;
  write_trace(trace, generate_trace(cfg));
  return trace.str();
}

std::vector<Job> trace_or_scenario(const std::string& path, std::string_view scenario) {
  return path.empty() ? scenario_trace(scenario) : load_trace(path);
}

std::vector<Report> all_extensions() {
  return {preemption_comparison(scenario_trace("preemption"), 30),
          drf_comparison(scenario_trace("drf")),
          topology_comparison(scenario_trace("topology"), 1.5, 3.0),
          backfill_comparison(scenario_trace("backfill")),
          fragmentation_comparison(FragmentationConfig{})};
}

std::vector<Report> curriculum_tables() {
  return {policy_comparison(scenario_trace("policy_mix")),
          gang_comparison(scenario_trace("gang_demo"))};
}

}  // namespace cluster_sim
