// topo-sim: the alpha-beta cost of collectives on a cluster's link hierarchy,
// for different placements of the same parallel groups. What it computes and
// prints is in topology/report.hpp.
#include <fmt/format.h>

#include <string>

#include "gpulab/cli.hpp"
#include "gpulab/emit_report.hpp"
#include "gpulab/flag_checks.hpp"
#include "gpulab/json.hpp"
#include "topology/checkpoint_cadence.hpp"
#include "topology/cluster.hpp"
#include "topology/report.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "Topology-aware collective cost model: the same all-reduce on NVLink vs InfiniBand, flat "
      "vs hierarchical,\n"
      "and how placement sets both step time and a failure's blast radius.",
      "topo-sim"};
  gpulab::CommonOptions common;
  topo::ReportOptions o;
  std::string topology;
  int world = 4;
  app.add_option("--topology", topology,
                 "Cluster description (JSON); default: the curriculum's 4 x 8 cluster");
  app.add_option("--message-mib", o.message_mib,
                 "All-reduce message (TP activation, DP gradient bucket), MiB")
      ->check(gpulab::finite_in(0, 1e9))
      ->capture_default_str();
  app.add_option("--layers", o.layers, "TP all-reduces per step (one per layer)")
      ->capture_default_str();
  app.add_option("--tp", o.tp, "Tensor-parallel group size")->capture_default_str();
  app.add_flag("--bubble", o.bubble, "Extension: pipeline bubble efficiency m/(m+s-1)");
  app.add_option("--stages", o.stages, "Pipeline stages for --bubble")->capture_default_str();
  app.add_flag("--search-3d", o.search_3d,
               "Extension: search TP x PP x DP layouts for the fastest step");
  app.add_option("--compute-s", o.compute_s,
                 "--search-3d: one step's compute on a single GPU, seconds")
      ->capture_default_str();
  app.add_option("--gradient-gb", o.gradient_gb,
                 "--search-3d: gradient bytes of the whole model, GB")
      ->capture_default_str();
  app.add_option("--micro-batches", o.micro_batches,
                 "--search-3d: micro-batches per step, all DP replicas together")
      ->capture_default_str();
  app.add_flag("--gpudirect", o.gpudirect,
               "Extension: the host-bounce penalty with GPUDirect RDMA off");
  app.add_flag("--blast-search", o.blast_search,
               "Extension: placement minimising blast radius within NVLink islands");
  app.add_flag("--all", o.all, "Every extension after the three tables");
  gpulab::add_json_flag(app, common);
  auto* cal = app.add_subcommand("calibrate",
                                 "Measure Lab 01's ring all-reduce here and fit a 'loopback' link");
  cal->add_option("--world", world, "Processes in the measured ring")->capture_default_str();
  gpulab::add_quick_flag(*cal, common, "Fewer sizes and iterations");
  cal->add_flag("--json", common.json, "Print the results as one JSON document");
  topo::CadenceInputs cadence;
  auto* ckpt = app.add_subcommand("checkpoint", "Extension: checkpoint interval (Young/Daly) by job size");
  ckpt->add_option("--checkpoint-s", cadence.checkpoint_s, "Seconds the job stalls to write one checkpoint")
      ->check(gpulab::finite_in(1e-3, 1e7))
      ->capture_default_str();
  ckpt->add_option("--restart-s", cadence.restart_s, "Seconds from a failure to training again")
      ->check(gpulab::finite_in(0, 1e7))
      ->capture_default_str();
  ckpt->add_option("--gpu-mtbf-h", cadence.gpu_mtbf_h, "Mean time between failures of one GPU, hours")
      ->check(gpulab::finite_in(1e-3, 1e9))
      ->capture_default_str();
  ckpt->add_flag("--json", common.json, "Print the results as one JSON document");

  return gpulab::run_program("topo-sim", app, argc, argv, [&] {
    topo::validate(o);
    if (cal->parsed()) return gpulab::emit_report(topo::run_calibration(world, common.quick), common.json);
    if (ckpt->parsed()) return gpulab::emit_report(topo::checkpoint_cadence(cadence), common.json);
    topo::Cluster c = topo::curriculum_cluster();
    if (!topology.empty()) {
      auto loaded = topo::load_cluster(topology);
      if (!loaded) throw gpulab::UsageError(loaded.error().message);
      c = loaded.value();
    }
    return gpulab::emit_report(topo::build_report(c, o), common.json);
  });
}
