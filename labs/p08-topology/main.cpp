// topo-sim: the alpha-beta cost of collectives on a cluster's link hierarchy,
// for different placements of the same parallel groups.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gpulab/cli.hpp"
#include "gpulab/json.hpp"
#include "gpulab/table.hpp"
#include "topology/blast_radius.hpp"
#include "topology/calibrate.hpp"
#include "topology/cluster.hpp"
#include "topology/gpudirect.hpp"
#include "topology/parallel3d.hpp"
#include "topology/placement.hpp"

namespace {

using gpulab::Json;
using topo::Cluster;

struct Options {
  gpulab::CommonOptions common;
  std::string topology;
  double message_mib = 256;
  int layers = 80;
  int tp = 8;
  bool bubble = false;
  int stages = 4;
  bool search_3d = false;
  double compute_s = 32;
  double gradient_gb = 350;
  int micro_batches = 32;
  bool gpudirect = false;
  bool blast_search = false;
  bool all = false;
  // calibrate
  int world = 4;
};

std::string short_link(const std::string& name) { return name == "InfiniBand" ? "IB" : name; }

double ms(double seconds) { return seconds * 1e3; }

// Table 1: one TP group's per-step all-reduce cost, placement by placement.
void tp_placement_table(const Cluster& c, const Options& o, Json& doc) {
  const double bytes = o.message_mib * (1 << 20);
  struct Row {
    std::string name, link;
    double seconds;
  };
  std::vector<Row> rows;
  for (int spread = 1; spread <= std::min(o.tp, c.nodes); spread *= 2) {
    std::vector<topo::Group> groups;
    try {
      groups = topo::tp_groups(c, o.tp, spread);
    } catch (const std::invalid_argument&) {
      continue;
    }
    const auto& g = groups.front();
    rows.push_back({spread == 1 ? "TP within 1 NVLink node" : fmt::format("TP split across {} nodes", spread),
                    topo::bottleneck_link(c, g).name, topo::tp_step_time(c, g, bytes, o.layers)});
  }
  if (rows.empty()) throw gpulab::UsageError(fmt::format("--tp {} does not fit a node of {} GPUs", o.tp, c.gpus_per_node));
  const double best = std::min_element(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.seconds < b.seconds; })->seconds;
  Json jr = Json::array();
  if (!o.common.json) {
    fmt::print("== all-reduce time for an {}-way tensor-parallel group ({:g} MB activation, x{} layers/step) ==\n", o.tp,
               o.message_mib, o.layers);
    fmt::print("{:<28}{:<15}{:>13}   vs best\n", "placement", "links", "per-step (ms)");
  }
  bool marked = false;
  for (const auto& r : rows) {
    const double ratio = r.seconds / best;
    const bool catastrophic = !marked && ratio >= 10;
    marked = marked || catastrophic;
    jr.push_back({{"placement", r.name}, {"link", r.link}, {"per_step_ms", ms(r.seconds)}, {"vs_best", ratio}});
    if (!o.common.json)
      fmt::print("{:<28}{:<15}{:>13.1f}{:>9.1f}x{}\n", r.name, r.link, ms(r.seconds), ratio,
                 catastrophic ? "  <- catastrophic" : "");
  }
  doc["tp_placement"] = {{"tp", o.tp}, {"message_bytes", bytes}, {"layers", o.layers}, {"rows", jr}};
}

// Table 2: flat ring over every GPU against the two-level all-reduce.
void hierarchical_table(const Cluster& c, const Options& o, Json& doc) {
  const double bytes = o.message_mib * (1 << 20);
  topo::Group all(static_cast<std::size_t>(c.gpus()));
  for (int i = 0; i < c.gpus(); ++i) all[static_cast<std::size_t>(i)] = i;
  const auto& flat_link = topo::bottleneck_link(c, all);
  const double flat = topo::ring_allreduce_time(c.gpus(), bytes, flat_link);
  const int per_island = c.gpus_per_node * c.nodes_per_island;
  const int islands = c.nodes / c.nodes_per_island;
  const double hier = topo::hierarchical_allreduce_time(per_island, islands, bytes, c.nvlink, c.infiniband);
  doc["hierarchical"] = {{"gpus", c.gpus()}, {"message_bytes", bytes}, {"flat_ms", ms(flat)},
                         {"flat_link", flat_link.name}, {"hierarchical_ms", ms(hier)}, {"speedup", flat / hier}};
  if (o.common.json) return;
  fmt::print("\n== data-parallel gradient all-reduce, {} nodes x {} GPUs ({:g} MB) ==\n", c.nodes, c.gpus_per_node,
             o.message_mib);
  // The curriculum's two labels differ in length and its colons are not aligned; kept as printed there.
  fmt::print("{:<41}: {:.1f} ms\n", fmt::format("flat ring over all {} GPUs ({})", c.gpus(), short_link(flat_link.name)),
             ms(flat));
  fmt::print("{:<42}: {:.1f} ms   ({:.1f}x faster)\n", "hierarchical (NVLink in-node, IB across)", ms(hier), flat / hier);
}

std::string stall_note(const Cluster& c, int stalled, int tp) {
  if (stalled == tp) return "one TP group";
  if (stalled == c.gpus()) return "spans all nodes";
  return fmt::format("{} TP groups on {} nodes", stalled / tp, stalled / c.gpus_per_node);
}

// Table 3: GPUs one failure stalls, TP packed in a node vs spread over all nodes.
void blast_table(const Cluster& c, const Options& o, Json& doc) {
  // Packed = the fewest nodes per TP group that tile the cluster; spread = the most.
  int packed = 0;
  int widest = 0;
  for (int s = 1; s <= std::min(o.tp, c.nodes); ++s) try {
      topo::tp_groups(c, o.tp, s);
      if (packed == 0) packed = s;
      widest = s;
    } catch (const std::invalid_argument&) {
    }
  if (packed == 0)
    throw gpulab::UsageError(fmt::format("TP groups of {} do not tile {} nodes x {} GPUs", o.tp, c.nodes, c.gpus_per_node));
  const int within = topo::worst_blast_radius(c, topo::tp_groups(c, o.tp, packed));
  const int across = topo::worst_blast_radius(c, topo::tp_groups(c, o.tp, widest));
  doc["blast_radius"] = {{"tp_within_node", within}, {"tp_across_nodes", across}, {"across_spread_nodes", widest}};
  if (o.common.json) return;
  fmt::print("\n== failure blast radius (1 GPU dies, synchronous job) ==\n");
  fmt::print("TP-within-node placement : 1 GPU failure stalls {} GPUs ({})\n", within, stall_note(c, within, o.tp));
  fmt::print("TP-across-nodes placement: 1 GPU failure stalls {} GPUs ({})\n", across, stall_note(c, across, o.tp));
}

void bubble_table(const Options& o, Json& doc) {
  Json jr = Json::array();
  gpulab::Table t;
  t.column("micro-batches m").column("stages s").column("efficiency m/(m+s-1)").column("bubble");
  for (int m : {1, 2, 4, 8, 16, 32, 64}) {
    const double e = topo::pipeline_efficiency(m, o.stages);
    jr.push_back({{"micro_batches", m}, {"stages", o.stages}, {"efficiency", e}});
    t.row({fmt::format("{}", m), fmt::format("{}", o.stages), fmt::format("{:.1f}%", 100 * e),
           fmt::format("{:.1f}%", 100 * (1 - e))});
  }
  doc["pipeline_bubble"] = jr;
  if (!o.common.json) fmt::print("\n== pipeline bubble: {} stages ==\n{}", o.stages, t.render());
}

void search_3d_table(const Cluster& c, const Options& o, Json& doc) {
  topo::Workload w;
  w.layers = o.layers;
  w.activation_bytes = o.message_mib * (1 << 20);
  w.gradient_bytes = o.gradient_gb * 1e9;
  w.compute_seconds = o.compute_s;
  w.micro_batches = o.micro_batches;
  const auto results = topo::search_3d(c, w);
  Json jr = Json::array();
  gpulab::Table t;
  t.column("rank", gpulab::Table::Align::kRight)
      .column("layout (fastest dim first)", gpulab::Table::Align::kLeft)
      .column("TP link", gpulab::Table::Align::kLeft)
      .column("PP link", gpulab::Table::Align::kLeft)
      .column("DP link", gpulab::Table::Align::kLeft)
      .column("compute (ms)")
      .column("bubble (ms)")
      .column("TP (ms)")
      .column("PP (ms)")
      .column("DP (ms)")
      .column("step (ms)");
  const std::size_t shown = std::min<std::size_t>(results.size(), 8);
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    jr.push_back({{"layout", r.layout.name()}, {"tp", r.layout.tp}, {"pp", r.layout.pp}, {"dp", r.layout.dp},
                  {"step_ms", ms(r.total())}, {"compute_ms", ms(r.compute)}, {"bubble_ms", ms(r.bubble)},
                  {"tp_ms", ms(r.tp_comm)}, {"pp_ms", ms(r.pp_comm)}, {"dp_ms", ms(r.dp_comm)}});
    if (i < shown)
      t.row({fmt::format("{}", i + 1), r.layout.name(), r.tp_link, r.pp_link, r.dp_link, fmt::format("{:.1f}", ms(r.compute)),
             fmt::format("{:.1f}", ms(r.bubble)), fmt::format("{:.1f}", ms(r.tp_comm)), fmt::format("{:.1f}", ms(r.pp_comm)),
             fmt::format("{:.1f}", ms(r.dp_comm)), fmt::format("{:.1f}", ms(r.total()))});
  }
  doc["search_3d"] = {{"layouts_searched", results.size()}, {"results", jr}};
  if (o.common.json) return;
  fmt::print("\n== 3D-parallel placement search: {} GPUs, {} layers, {} micro-batches, {:g} s compute, {:g} GB gradients ==\n",
             c.gpus(), o.layers, o.micro_batches, o.compute_s, o.gradient_gb);
  fmt::print("{}", t.render());
  const auto& worst = results.back();
  const auto curriculum = std::find_if(results.begin(), results.end(), [](const topo::StepTime& r) {
    return r.layout.tp == 8 && r.layout.pp == 4 && r.layout.fastest() == 't';
  });
  if (curriculum != results.end())
    fmt::print("the curriculum's layout (TP 8 in node, PP 4 across nodes) ranks #{} of {}: {} at {:.1f} ms/step\n",
               curriculum - results.begin() + 1, results.size(), curriculum->layout.name(), ms(curriculum->total()));
  fmt::print("searched {} layouts; best {} at {:.1f} ms/step, worst {} at {:.1f} ms/step ({:.1f}x)\n", results.size(),
             results.front().layout.name(), ms(results.front().total()), worst.layout.name(), ms(worst.total()),
             worst.total() / results.front().total());
}

void gpudirect_table(const Cluster& c, const Options& o, Json& doc) {
  const double bytes = o.message_mib * (1 << 20);
  const Cluster off = topo::without_gpudirect(c);
  const topo::Link bounce = topo::host_bounce_link(c);
  const int per_island = c.gpus_per_node * c.nodes_per_island;
  const int islands = c.nodes / c.nodes_per_island;
  const double on_t = topo::hierarchical_allreduce_time(per_island, islands, bytes, c.nvlink, c.infiniband);
  const double off_t = topo::hierarchical_allreduce_time(per_island, islands, bytes, c.nvlink, off.infiniband);
  gpulab::Table t;
  t.column("path", gpulab::Table::Align::kLeft).column("bandwidth (GB/s)").column("slower than HBM");
  struct Path {
    std::string name;
    double bw;
  };
  const std::vector<Path> paths{{"HBM (data stays on the GPU)", c.hbm_bandwidth},
                                {"NVLink (GPU to GPU in a node)", c.nvlink.bandwidth},
                                {"PCIe (GPU to host memory)", c.pcie.bandwidth},
                                {"InfiniBand with GPUDirect RDMA", c.infiniband.bandwidth},
                                {"InfiniBand via host (GPUDirect off)", bounce.bandwidth}};
  Json jp = Json::array();
  for (const auto& p : paths) {
    t.row({p.name, fmt::format("{:.1f}", p.bw / 1e9), fmt::format("{:.1f}x", c.hbm_bandwidth / p.bw)});
    jp.push_back({{"path", p.name}, {"bandwidth_GBps", p.bw / 1e9}, {"vs_hbm", c.hbm_bandwidth / p.bw}});
  }
  doc["gpudirect"] = {{"paths", jp}, {"hierarchical_on_ms", ms(on_t)}, {"hierarchical_off_ms", ms(off_t)}};
  if (o.common.json) return;
  fmt::print("\n== GPUDirect RDMA off: cross-node bytes bounce through host memory ({:g} MB all-reduce) ==\n",
             o.message_mib);
  fmt::print("{}", t.render());
  fmt::print("the host bounce is the {:.0f}x cliff: HBM {:.2f} TB/s vs PCIe {:.0f} GB/s\n",
             c.hbm_bandwidth / c.pcie.bandwidth, c.hbm_bandwidth / 1e12, c.pcie.bandwidth / 1e9);
  fmt::print("hierarchical all-reduce, GPUDirect on : {:.2f} ms\n", ms(on_t));
  fmt::print("hierarchical all-reduce, GPUDirect off: {:.2f} ms   ({:.1f}x slower)\n", ms(off_t), off_t / on_t);
}

void blast_search_table(const Cluster& c, const Options& o, Json& doc) {
  const double bytes = o.message_mib * (1 << 20);
  const auto s = topo::search_min_blast_radius(c, o.tp, bytes, o.layers);
  gpulab::Table t;
  t.column("nodes per TP group").column("TP link", gpulab::Table::Align::kLeft).column("inside 1 island",
                                                                                       gpulab::Table::Align::kLeft)
      .column("blast radius (GPUs)").column("TP per-step (ms)").column("", gpulab::Table::Align::kLeft);
  Json jr = Json::array();
  for (std::size_t i = 0; i < s.options.size(); ++i) {
    const auto& p = s.options[i];
    t.row({fmt::format("{}", p.spread), p.link, p.island_ok ? "yes" : "no", fmt::format("{}", p.blast_radius),
           fmt::format("{:.1f}", ms(p.tp_step_seconds)), static_cast<int>(i) == s.best ? "<- best" : ""});
    jr.push_back({{"spread_nodes", p.spread}, {"link", p.link}, {"island_ok", p.island_ok},
                  {"blast_radius", p.blast_radius}, {"tp_step_ms", ms(p.tp_step_seconds)}});
  }
  doc["blast_search"] = {{"options", jr}, {"best", s.best}};
  if (o.common.json) return;
  fmt::print("\n== failure-domain search: TP groups of {} over {} nodes x {} GPUs, NVLink islands of {} node(s) ==\n", o.tp,
             c.nodes, c.gpus_per_node, c.nodes_per_island);
  fmt::print("{}", t.render());
  if (s.best < 0) fmt::print("no placement keeps a TP group of {} inside one NVLink island\n", o.tp);
}

int run_calibrate(const Options& o, Json& doc) {
#ifdef TOPO_HAVE_CALIBRATE
  std::vector<double> sizes;
  for (double b = 4096; b <= (o.common.quick ? 1 << 20 : 16 << 20); b *= 4) sizes.push_back(b);
  const auto samples = topo::measure_loopback_ring(o.world, sizes, o.common.quick ? 3 : 10, 2);
  const topo::Link fitted = topo::fit_ring_link(o.world, samples);
  Json jr = Json::array();
  gpulab::Table t;
  t.column("size (B)").column("measured (us)").column("model (us)").column("model/measured");
  for (const auto& s : samples) {
    const double model = topo::ring_allreduce_time(o.world, s.bytes, fitted);
    t.row({fmt::format("{:.0f}", s.bytes), fmt::format("{:.1f}", s.seconds * 1e6), fmt::format("{:.1f}", model * 1e6),
           fmt::format("{:.2f}", model / s.seconds)});
    jr.push_back({{"bytes", s.bytes}, {"measured_s", s.seconds}, {"model_s", model}});
  }
  doc["calibration"] = {{"world", o.world}, {"bandwidth_GBps", fitted.bandwidth / 1e9},
                        {"latency_us", fitted.latency * 1e6}, {"points", jr}};
  if (!o.common.json) {
    fmt::print("== calibration: ring all-reduce, {} processes over 127.0.0.1 TCP (p08-ring-allreduce) ==\n", o.world);
    fmt::print("{}", t.render());
    fmt::print("fitted link \"loopback\": bandwidth {:.2f} GB/s, latency {:.1f} us per hop\n", fitted.bandwidth / 1e9,
               fitted.latency * 1e6);
    const Cluster ref = topo::curriculum_cluster();
    fmt::print("compare: NVLink {:.0f} GB/s, InfiniBand {:.0f} GB/s, {:.0f} us per hop in the curriculum's cluster\n",
               ref.nvlink.bandwidth / 1e9, ref.infiniband.bandwidth / 1e9, ref.nvlink.latency * 1e6);
  }
  return gpulab::kExitOk;
#else
  (void)o;
  (void)doc;
  throw gpulab::Unsupported("topo-sim was built without p08-ring-allreduce, which calibrate measures");
#endif
}

void validate(const Options& o) {
  if (!(o.message_mib > 0) || !std::isfinite(o.message_mib)) throw gpulab::UsageError("--message-mib must be > 0");
  if (o.layers < 1) throw gpulab::UsageError("--layers must be >= 1");
  if (o.tp < 1) throw gpulab::UsageError("--tp must be >= 1");
  if (o.stages < 1) throw gpulab::UsageError("--stages must be >= 1");
  if (o.micro_batches < 1) throw gpulab::UsageError("--micro-batches must be >= 1");
  if (!(o.compute_s > 0) || !(o.gradient_gb >= 0)) throw gpulab::UsageError("--compute-s must be > 0, --gradient-gb >= 0");
  if (o.world < 2 || o.world > 16) throw gpulab::UsageError("--world must be 2..16");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Topology-aware collective cost model: the same all-reduce on NVLink vs InfiniBand, flat vs hierarchical,\n"
      "and how placement sets both step time and a failure's blast radius.",
      "topo-sim"};
  Options o;
  app.add_option("--topology", o.topology, "Cluster description (JSON); default: the curriculum's 4 x 8 cluster");
  app.add_option("--message-mib", o.message_mib, "All-reduce message (TP activation, DP gradient bucket), MiB")
      ->capture_default_str();
  app.add_option("--layers", o.layers, "TP all-reduces per step (one per layer)")->capture_default_str();
  app.add_option("--tp", o.tp, "Tensor-parallel group size")->capture_default_str();
  app.add_flag("--bubble", o.bubble, "Extension: pipeline bubble efficiency m/(m+s-1)");
  app.add_option("--stages", o.stages, "Pipeline stages for --bubble")->capture_default_str();
  app.add_flag("--search-3d", o.search_3d, "Extension: search TP x PP x DP layouts for the fastest step");
  app.add_option("--compute-s", o.compute_s, "--search-3d: one step's compute on a single GPU, seconds")->capture_default_str();
  app.add_option("--gradient-gb", o.gradient_gb, "--search-3d: gradient bytes of the whole model, GB")->capture_default_str();
  app.add_option("--micro-batches", o.micro_batches, "--search-3d: micro-batches per step, all DP replicas together")->capture_default_str();
  app.add_flag("--gpudirect", o.gpudirect, "Extension: the host-bounce penalty with GPUDirect RDMA off");
  app.add_flag("--blast-search", o.blast_search, "Extension: placement minimising blast radius within NVLink islands");
  app.add_flag("--all", o.all, "Every extension after the three tables");
  gpulab::add_json_flag(app, o.common);
  auto* cal = app.add_subcommand("calibrate", "Measure Lab 01's ring all-reduce here and fit a 'loopback' link");
  cal->add_option("--world", o.world, "Processes in the measured ring")->capture_default_str();
  gpulab::add_quick_flag(*cal, o.common, "Fewer sizes and iterations");
  cal->add_flag("--json", o.common.json, "Print the results as one JSON document");

  return gpulab::run_program("topo-sim", app, argc, argv, [&] {
    validate(o);
    Json doc;
    if (cal->parsed()) {
      const int rc = run_calibrate(o, doc);
      if (o.common.json) gpulab::print_json(doc);
      return rc;
    }
    Cluster c = topo::curriculum_cluster();
    if (!o.topology.empty()) {
      auto loaded = topo::load_cluster(o.topology);
      if (!loaded) throw gpulab::UsageError(loaded.error().message);
      c = loaded.value();
    }
    const Cluster effective = c.gpudirect_rdma ? c : topo::without_gpudirect(c);
    doc["cluster"] = {{"name", c.name}, {"nodes", c.nodes}, {"gpus_per_node", c.gpus_per_node},
                      {"nodes_per_island", c.nodes_per_island}, {"gpudirect_rdma", c.gpudirect_rdma}};
    tp_placement_table(effective, o, doc);
    hierarchical_table(effective, o, doc);
    blast_table(effective, o, doc);
    if (!o.common.json)
      fmt::print("\n(The TP cost is multiplied by {} layers because tensor parallelism all-reduces inside every layer: "
                 "crossing nodes pays the slow link {} times per step, and none of it can be hidden.)\n",
                 o.layers, o.layers);
    if (o.bubble || o.all) bubble_table(o, doc);
    if (o.search_3d || o.all) search_3d_table(effective, o, doc);
    if (o.gpudirect || o.all) gpudirect_table(c, o, doc);
    if (o.blast_search || o.all) blast_search_table(effective, o, doc);
    if (o.common.json) gpulab::print_json(doc);
    return gpulab::kExitOk;
  });
}
