// cluster-sim: the GPU cluster scheduler simulator. Without a subcommand it
// prints the curriculum's two tables; subcommands run a trace, generate one,
// show each extension, or measure how the simulator scales.
#include <fmt/format.h>

#include <sstream>

#include "cluster_sim/inventory.hpp"
#include "cluster_sim/scale.hpp"
#include "cluster_sim/scenarios.hpp"
#include "cluster_sim/simulator.hpp"
#include "cluster_sim/trace.hpp"
#include "gpulab/cli.hpp"
#include "gpulab/flag_checks.hpp"
#include "gpulab/json.hpp"
#include "gpulab/output_file.hpp"

namespace cs = cluster_sim;

namespace {

constexpr const char* kProgram = "cluster-sim";

std::vector<cs::Job> trace_or(const std::string& path, std::string_view scenario) {
  return path.empty() ? cs::scenario_trace(scenario) : cs::load_trace(path);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"GPU cluster scheduler simulator: placement policies, stranded GPUs and the gang deadlock.\n"
               "With no subcommand, prints the curriculum's policy table and gang demo."};
  app.require_subcommand(0, 1);
  gpulab::CommonOptions common;
  gpulab::add_json_flag(app, common);
  gpulab::add_seed_flag(app, common);
  app.fallthrough();

  // run
  auto* run = app.add_subcommand("run", "Simulate one trace (a CSV file or a generated one)");
  std::string trace_path;
  std::size_t generate = 0;
  cs::SimConfig cfg;
  std::string policy = "best_fit";
  std::string queue = "fifo";
  auto* trace_opt = run->add_option("--trace", trace_path, "Trace CSV: id,arrival,gpus,duration[,priority,tenant,cpus]");
  run->add_option("--generate", generate, "Simulate a synthetic trace of this many jobs (uses --seed)")
      ->excludes(trace_opt);
  std::string inventory_path;
  auto* inventory_opt =
      run->add_option("--inventory", inventory_path,
                      "The cluster as a JSON list of node inventories (gpulab/inventory)");
  auto* nodes_opt = run->add_option("--nodes", cfg.nodes, "Nodes")->capture_default_str();
  auto* gpus_opt = run->add_option("--gpus-per-node", cfg.gpus_per_node, "GPUs per node (1-64)")
                       ->capture_default_str();
  run->add_option("--policy", policy, "spread | first_fit | best_fit | topology_aware")->capture_default_str();
  bool gang = false;
  run->add_flag("--gang", gang, "Place multi-node jobs atomically (default: naive node-by-node grabbing)");
  run->add_option("--queue", queue, "fifo | drf (dominant resource fairness across tenants)")
      ->capture_default_str();
  auto* cpus_opt =
      run->add_option("--cpus-per-node", cfg.cpus_per_node, "CPUs per node (0 = not modelled)")
          ->capture_default_str();
  auto* island_opt = run->add_option("--island-size", cfg.island_size,
                                     "GPUs per NVLink island (0 = no topology penalty)")
                         ->capture_default_str();
  for (auto* o : {nodes_opt, gpus_opt, cpus_opt, island_opt}) inventory_opt->excludes(o);
  run->add_option("--island-penalty", cfg.island_penalty, "Duration factor for a job split across islands")
      ->check(gpulab::finite_in(0, 1e6))
      ->capture_default_str();
  run->add_option("--node-penalty", cfg.node_penalty, "Duration factor for a job split across nodes")
      ->check(gpulab::finite_in(0, 1e6))
      ->capture_default_str();
  run->add_flag("--preempt", cfg.preempt, "Higher-priority jobs evict lower-priority ones");
  run->add_option("--checkpoint-penalty", cfg.checkpoint_penalty, "Work added to a preempted job")
      ->check(gpulab::finite_in(-1e12, 1e12))
      ->capture_default_str();
  run->add_flag("--backfill", cfg.backfill, "EASY backfill behind a blocked queue head");
  run->add_option("--backfill-depth", cfg.backfill_depth, "Queued jobs examined for backfill")
      ->capture_default_str();
  run->add_option("--large-gpus", cfg.large_gpus,
                  "A job of at least this many GPUs is large: it may use the reserve and trigger --defrag (1-4096)")
      ->check(gpulab::whole_in<int>(1, 4096))
      ->capture_default_str();
  run->add_option("--reserve-nodes", cfg.reserve_nodes,
                  "Hold back the last N nodes for large jobs (0 = no reserve; fewer than --nodes)")
      ->check(gpulab::whole_in<int>(0, 1'000'000))
      ->capture_default_str();
  run->add_flag("--defrag", cfg.defrag,
                "Move running small jobs (checkpoint penalty each) when that lets a blocked large job start");

  // generate
  auto* gen = app.add_subcommand("generate", "Write a synthetic trace CSV (same seed, same trace)");
  cs::GeneratorConfig gcfg;
  std::string out_path;
  gen->add_option("--jobs", gcfg.jobs, "Number of jobs")->capture_default_str();
  gen->add_option("--nodes", gcfg.nodes, "Nodes the load is sized for")->capture_default_str();
  gen->add_option("--gpus-per-node", gcfg.gpus_per_node, "GPUs per node")->capture_default_str();
  gen->add_option("--load", gcfg.load, "Offered GPU load (fraction of capacity)")->capture_default_str();
  gen->add_option("--mean-duration", gcfg.mean_duration, "Mean job duration")->capture_default_str();
  gen->add_option("--tenants", gcfg.tenants, "Number of tenants")->capture_default_str();
  gen->add_option("--out", out_path, "Output file (default: stdout)");

  // extensions
  std::string ext_trace;
  double checkpoint = 30, island_penalty = 1.5, node_penalty = 3.0;
  auto* pre = app.add_subcommand("preemption", "Extension 1: preemption with a checkpoint penalty");
  pre->add_option("--trace", ext_trace, "Trace (default: traces/preemption.csv, built in)");
  pre->add_option("--checkpoint-penalty", checkpoint, "Work added to a preempted job")
      ->check(gpulab::finite_in(0, 1e12))
      ->capture_default_str();
  auto* drf = app.add_subcommand("drf", "Extension 2: DRF vs FIFO across tenants with GPU and CPU demands");
  drf->add_option("--trace", ext_trace, "Trace (default: traces/drf.csv, built in)");
  auto* topo = app.add_subcommand("topology", "Extension 3: NVLink islands and topology_aware placement");
  topo->add_option("--trace", ext_trace, "Trace (default: traces/topology.csv, built in)");
  topo->add_option("--island-penalty", island_penalty, "Duration factor across islands")
      ->check(gpulab::finite_in(0, 1e6))
      ->capture_default_str();
  topo->add_option("--node-penalty", node_penalty, "Duration factor across nodes")
      ->check(gpulab::finite_in(0, 1e6))
      ->capture_default_str();
  auto* bf = app.add_subcommand("backfill", "Extension 4: EASY backfill vs strict FIFO");
  bf->add_option("--trace", ext_trace, "Trace (default: traces/backfill.csv, built in)");
  cs::FragmentationConfig fcfg;
  auto* frag = app.add_subcommand(
      "fragmentation", "Extension 5: a reserved whole-node pool and defragmentation, on a seeded synthetic trace");
  frag->add_option("--jobs", fcfg.jobs, "Jobs in the generated trace (1-100000)")
      ->check(gpulab::whole_in<std::size_t>(1, 100'000))
      ->capture_default_str();
  frag->add_option("--nodes", fcfg.nodes, "Nodes of 8 GPUs (2-1000)")
      ->check(gpulab::whole_in<int>(2, 1000))
      ->capture_default_str();
  frag->add_option("--load", fcfg.load, "Offered GPU load, fraction of capacity (0.05-2)")
      ->check(gpulab::finite_in(0.05, 2.0))
      ->capture_default_str();
  frag->add_option("--reserve-nodes", fcfg.reserve_nodes, "Nodes held back for large jobs (1 .. nodes-1)")
      ->check(gpulab::whole_in<int>(1, 999))
      ->capture_default_str();
  frag->add_option("--checkpoint-penalty", fcfg.checkpoint_penalty, "Work added to a moved job (0-100000)")
      ->check(gpulab::finite_in(0, 100'000))
      ->capture_default_str();
  auto* ext = app.add_subcommand("extensions", "All five extension tables");

  // scale
  auto* sc = app.add_subcommand("scale", "Measure simulated jobs/s from 100 to 10,000 nodes");
  int jobs_per_node = 100;
  sc->add_option("--jobs-per-node", jobs_per_node, "Jobs per node (100 -> 1,000,000 jobs at 10,000 nodes)")
      ->capture_default_str()->check(CLI::Range(1, 10000));
  gpulab::add_quick_flag(*sc, common, "10 jobs per node instead of 100 (a few seconds)");

  return gpulab::run_program(kProgram, app, argc, argv, [&]() -> int {
    if (*run) {
      cfg.policy = cs::parse_policy(policy);
      cfg.gang = gang;
      if (queue == "drf") {
        cfg.order = cs::QueueOrder::kDrf;
      } else if (queue != "fifo") {
        throw gpulab::UsageError(fmt::format("unknown queue '{}' (use fifo or drf)", queue));
      }
      if (cfg.checkpoint_penalty < 0) throw gpulab::UsageError("--checkpoint-penalty must be >= 0");
      if (cfg.island_penalty < 1 || cfg.node_penalty < 1)
        throw gpulab::UsageError("--island-penalty and --node-penalty must be >= 1");
      if (cfg.backfill_depth < 1) throw gpulab::UsageError("--backfill-depth must be >= 1");
      if (!inventory_path.empty()) cs::apply(cs::load_inventory_shape(inventory_path), cfg);
      std::vector<cs::Job> jobs;
      if (generate > 0) {
        cs::GeneratorConfig g;
        g.jobs = generate;
        g.nodes = cfg.nodes;
        g.gpus_per_node = cfg.gpus_per_node;
        g.seed = common.seed;
        jobs = cs::generate_trace(g);
      } else if (!trace_path.empty()) {
        jobs = cs::load_trace(trace_path);
      } else {
        throw gpulab::UsageError("run needs --trace FILE or --generate N");
      }
      const cs::SimResult r = cs::simulate(jobs, cfg);
      if (common.json) {
        gpulab::print_json(cs::run_json(cfg, jobs, r));
      } else {
        fmt::print("{}", cs::render_run(cfg, jobs, r));
      }
      return gpulab::kExitOk;
    }
    if (*gen) {
      gcfg.seed = common.seed;
      const auto jobs = cs::generate_trace(gcfg);
      std::ostringstream trace;
      cs::write_trace(trace, jobs);
      if (out_path.empty()) {
        fmt::print("{}", trace.str());  // a failed write throws; run_program reports it
      } else if (auto written = gpulab::write_file(out_path, trace.str()); !written) {
        throw gpulab::UsageError(written.error().message);
      }
      return gpulab::kExitOk;
    }
    if (*pre) return cs::emit({cs::preemption_comparison(trace_or(ext_trace, "preemption"), checkpoint)}, common.json);
    if (*drf) return cs::emit({cs::drf_comparison(trace_or(ext_trace, "drf"))}, common.json);
    if (*topo)
      return cs::emit({cs::topology_comparison(trace_or(ext_trace, "topology"), island_penalty, node_penalty)},
                  common.json);
    if (*bf) return cs::emit({cs::backfill_comparison(trace_or(ext_trace, "backfill"))}, common.json);
    if (*frag) {
      fcfg.seed = common.seed;
      return cs::emit({cs::fragmentation_comparison(fcfg)}, common.json);
    }
    if (*ext) {
      return cs::emit({cs::preemption_comparison(cs::scenario_trace("preemption"), 30),
                   cs::drf_comparison(cs::scenario_trace("drf")),
                   cs::topology_comparison(cs::scenario_trace("topology"), 1.5, 3.0),
                   cs::backfill_comparison(cs::scenario_trace("backfill")),
                   cs::fragmentation_comparison(cs::FragmentationConfig{})},
                  common.json);
    }
    if (*sc) {
      const int per_node = common.quick ? 10 : jobs_per_node;
      return cs::emit({cs::scale_report({100, 1000, 10000}, per_node, common.seed)}, common.json);
    }
    return cs::emit({cs::policy_comparison(cs::scenario_trace("policy_mix")),
                 cs::gang_comparison(cs::scenario_trace("gang_demo"))},
                common.json);
  });
}
