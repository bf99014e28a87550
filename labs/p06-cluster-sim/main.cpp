// cluster-sim: the GPU cluster scheduler simulator. Without a subcommand it
// prints the curriculum's two tables; subcommands run a trace, generate one,
// show each extension, or measure how the simulator scales.
#include <fmt/format.h>

#include "cluster_sim/commands.hpp"
#include "cluster_sim/scale.hpp"
#include "gpulab/cli.hpp"
#include "gpulab/flag_checks.hpp"
#include "gpulab/json.hpp"
#include "gpulab/output_file.hpp"

namespace cs = cluster_sim;

namespace {

constexpr const char* kProgram = "cluster-sim";

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
  cs::RunRequest req;
  cs::SimConfig& cfg = req.cfg;
  auto* trace_opt = run->add_option("--trace", req.trace_path, "Trace CSV: id,arrival,gpus,duration[,priority,tenant,cpus]");
  run->add_option("--generate", req.generate, "Simulate a synthetic trace of this many jobs (uses --seed)")
      ->excludes(trace_opt);
  auto* inventory_opt =
      run->add_option("--inventory", req.inventory_path,
                      "The cluster as a JSON list of node inventories (gpulab/inventory)");
  auto* nodes_opt = run->add_option("--nodes", cfg.nodes, "Nodes")->capture_default_str();
  auto* gpus_opt = run->add_option("--gpus-per-node", cfg.gpus_per_node, "GPUs per node (1-64)")
                       ->capture_default_str();
  run->add_option("--policy", req.policy, "spread | first_fit | best_fit | topology_aware")->capture_default_str();
  run->add_flag("--gang", req.gang, "Place multi-node jobs atomically (default: naive node-by-node grabbing)");
  run->add_option("--queue", req.queue, "fifo | drf (dominant resource fairness across tenants)")
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
      req.seed = common.seed;
      const cs::RunOutcome r = cs::run_trace(req);
      if (common.json) {
        gpulab::print_json(cs::run_json(r.cfg, r.jobs, r.result));
      } else {
        fmt::print("{}", cs::render_run(r.cfg, r.jobs, r.result));
      }
      return gpulab::kExitOk;
    }
    if (*gen) {
      gcfg.seed = common.seed;
      const std::string trace = cs::generated_trace_csv(gcfg);
      if (out_path.empty()) {
        fmt::print("{}", trace);  // a failed write throws; run_program reports it
      } else if (auto written = gpulab::write_file(out_path, trace); !written) {
        throw gpulab::UsageError(written.error().message);
      }
      return gpulab::kExitOk;
    }
    if (*pre)
      return cs::emit({cs::preemption_comparison(cs::trace_or_scenario(ext_trace, "preemption"), checkpoint)},
                      common.json);
    if (*drf) return cs::emit({cs::drf_comparison(cs::trace_or_scenario(ext_trace, "drf"))}, common.json);
    if (*topo)
      return cs::emit({cs::topology_comparison(cs::trace_or_scenario(ext_trace, "topology"), island_penalty,
                                               node_penalty)},
                      common.json);
    if (*bf) return cs::emit({cs::backfill_comparison(cs::trace_or_scenario(ext_trace, "backfill"))}, common.json);
    if (*frag) {
      fcfg.seed = common.seed;
      return cs::emit({cs::fragmentation_comparison(fcfg)}, common.json);
    }
    if (*ext) return cs::emit(cs::all_extensions(), common.json);
    if (*sc) {
      const int per_node = common.quick ? 10 : jobs_per_node;
      return cs::emit({cs::scale_report({100, 1000, 10000}, per_node, common.seed)}, common.json);
    }
    return cs::emit(cs::curriculum_tables(), common.json);
  });
}
