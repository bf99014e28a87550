// What topo-sim computes and how it prints: the curriculum's three tables (TP
// placement, flat vs hierarchical all-reduce, blast radius) and the extensions
// asked for, as one result struct rendered as the README's text by render()
// and as one JSON document by to_json(); calibrate has its own. main.cpp only
// wires flags to these. build_report() throws gpulab::UsageError for a TP
// size the cluster cannot hold.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpulab/json.hpp"
#include "topology/blast_radius.hpp"
#include "topology/calibrate.hpp"
#include "topology/cluster.hpp"
#include "topology/parallel3d.hpp"

namespace topo {

struct ReportOptions {
  double message_mib = 256;
  int layers = 80;
  int tp = 8;
  int stages = 4;
  double compute_s = 32;
  double gradient_gb = 350;
  int micro_batches = 32;
  bool bubble = false;
  bool search_3d = false;
  bool gpudirect = false;
  bool blast_search = false;
  bool all = false;  // every extension
};
// Throws gpulab::UsageError naming the flag.
void validate(const ReportOptions& o);

struct TpPlacementRow {
  std::string name, link;
  double seconds = 0;  // per step
  double vs_best = 0;
  bool catastrophic = false;  // the first row >= 10x the best
};
struct HierarchicalResult {
  double flat = 0, hierarchical = 0;  // seconds
  std::string flat_link;
};
struct BlastResult {
  int within = 0, across = 0;  // GPUs stalled, TP packed vs spread
  int widest = 0;              // nodes per TP group when spread
};
struct BubbleRow {
  int micro_batches = 0;
  double efficiency = 0;
};
struct GpuDirectPath {
  std::string name;
  double bandwidth = 0;
};
struct GpuDirectResult {
  std::vector<GpuDirectPath> paths;
  double on = 0, off = 0;  // hierarchical all-reduce seconds
};

struct TopoReport {
  Cluster
      cluster;  // as described (the tables use it with GPUDirect applied, except the GPUDirect one)
  ReportOptions options;
  std::vector<TpPlacementRow> tp_rows;
  HierarchicalResult hierarchical;
  BlastResult blast;
  std::optional<std::vector<BubbleRow>> bubble;
  std::optional<std::vector<StepTime>> search_3d;  // fastest first
  std::optional<GpuDirectResult> gpudirect;
  std::optional<PlacementSearch> blast_search;
};
TopoReport build_report(const Cluster& c, const ReportOptions& o);
std::string render(const TopoReport& r);
gpulab::Json to_json(const TopoReport& r);

// calibrate: Lab 01's ring all-reduce measured here, and the link fitted to it.
struct CalibrationReport {
  int world = 0;
  std::vector<Sample> samples;
  Link fitted;
};
// Throws gpulab::Unsupported when topo-sim was built without p08-ring-allreduce.
CalibrationReport run_calibration(int world, bool quick);
std::string render(const CalibrationReport& r);
gpulab::Json to_json(const CalibrationReport& r);

}  // namespace topo
