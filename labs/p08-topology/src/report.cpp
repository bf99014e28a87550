#include "topology/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <stdexcept>

#include "gpulab/errors.hpp"
#include "gpulab/table.hpp"
#include "topology/gpudirect.hpp"
#include "topology/placement.hpp"

namespace topo {

using gpulab::Json;

namespace {

std::string short_link(const std::string& name) {
  return name == "InfiniBand" ? "IB" : name;
}

double ms(double seconds) {
  return seconds * 1e3;
}

double message_bytes(const ReportOptions& o) {
  return o.message_mib * (1 << 20);
}

// Table 1: one TP group's per-step all-reduce cost, placement by placement.
std::vector<TpPlacementRow> tp_placement(const Cluster& c, const ReportOptions& o) {
  std::vector<TpPlacementRow> rows;
  for (int spread = 1; spread <= std::min(o.tp, c.nodes); spread *= 2) {
    std::vector<Group> groups;
    try {
      groups = tp_groups(c, o.tp, spread);
    } catch (const std::invalid_argument&) {
      continue;
    }
    const auto& g = groups.front();
    rows.push_back(
        {spread == 1 ? "TP within 1 NVLink node" : fmt::format("TP split across {} nodes", spread),
         bottleneck_link(c, g).name, tp_step_time(c, g, message_bytes(o), o.layers)});
  }
  if (rows.empty())
    throw gpulab::UsageError(
        fmt::format("--tp {} does not fit a node of {} GPUs", o.tp, c.gpus_per_node));
  const double best = std::min_element(rows.begin(), rows.end(), [](auto& a, auto& b) {
                        return a.seconds < b.seconds;
                      })->seconds;
  bool marked = false;
  for (auto& r : rows) {
    r.vs_best = r.seconds / best;
    r.catastrophic = !marked && r.vs_best >= 10;
    marked = marked || r.catastrophic;
  }
  return rows;
}

// Table 2: flat ring over every GPU against the two-level all-reduce.
HierarchicalResult hierarchical(const Cluster& c, const ReportOptions& o) {
  Group all(static_cast<std::size_t>(c.gpus()));
  for (int i = 0; i < c.gpus(); ++i) all[static_cast<std::size_t>(i)] = i;
  const auto& flat_link = bottleneck_link(c, all);
  const int per_island = c.gpus_per_node * c.nodes_per_island;
  const int islands = c.nodes / c.nodes_per_island;
  return {
      ring_allreduce_time(c.gpus(), message_bytes(o), flat_link),
      hierarchical_allreduce_time(per_island, islands, message_bytes(o), c.nvlink, c.infiniband),
      flat_link.name};
}

// Table 3: GPUs one failure stalls, TP packed in a node vs spread over all nodes.
BlastResult blast(const Cluster& c, const ReportOptions& o) {
  // Packed = the fewest nodes per TP group that tile the cluster; spread = the most.
  int packed = 0;
  int widest = 0;
  for (int s = 1; s <= std::min(o.tp, c.nodes); ++s) try {
      tp_groups(c, o.tp, s);
      if (packed == 0) packed = s;
      widest = s;
    } catch (const std::invalid_argument&) {
    }
  if (packed == 0)
    throw gpulab::UsageError(fmt::format("TP groups of {} do not tile {} nodes x {} GPUs", o.tp,
                                         c.nodes, c.gpus_per_node));
  return {worst_blast_radius(c, tp_groups(c, o.tp, packed)),
          worst_blast_radius(c, tp_groups(c, o.tp, widest)), widest};
}

std::vector<StepTime> search(const Cluster& c, const ReportOptions& o) {
  Workload w;
  w.layers = o.layers;
  w.activation_bytes = message_bytes(o);
  w.gradient_bytes = o.gradient_gb * 1e9;
  w.compute_seconds = o.compute_s;
  w.micro_batches = o.micro_batches;
  return search_3d(c, w);
}

GpuDirectResult gpudirect(const Cluster& c, const ReportOptions& o) {
  const Cluster off = without_gpudirect(c);
  const Link bounce = host_bounce_link(c);
  const int per_island = c.gpus_per_node * c.nodes_per_island;
  const int islands = c.nodes / c.nodes_per_island;
  GpuDirectResult r;
  r.on = hierarchical_allreduce_time(per_island, islands, message_bytes(o), c.nvlink, c.infiniband);
  r.off =
      hierarchical_allreduce_time(per_island, islands, message_bytes(o), c.nvlink, off.infiniband);
  r.paths = {{"HBM (data stays on the GPU)", c.hbm_bandwidth},
             {"NVLink (GPU to GPU in a node)", c.nvlink.bandwidth},
             {"PCIe (GPU to host memory)", c.pcie.bandwidth},
             {"InfiniBand with GPUDirect RDMA", c.infiniband.bandwidth},
             {"InfiniBand via host (GPUDirect off)", bounce.bandwidth}};
  return r;
}

std::string stall_note(const Cluster& c, int stalled, int tp) {
  if (stalled == tp) return "one TP group";
  if (stalled == c.gpus()) return "spans all nodes";
  return fmt::format("{} TP groups on {} nodes", stalled / tp, stalled / c.gpus_per_node);
}

Cluster effective_cluster(const Cluster& c) {
  return c.gpudirect_rdma ? c : without_gpudirect(c);
}

}  // namespace

void validate(const ReportOptions& o) {
  if (!(o.message_mib > 0) || !std::isfinite(o.message_mib))
    throw gpulab::UsageError("--message-mib must be > 0");
  if (o.layers < 1) throw gpulab::UsageError("--layers must be >= 1");
  if (o.tp < 1) throw gpulab::UsageError("--tp must be >= 1");
  if (o.stages < 1) throw gpulab::UsageError("--stages must be >= 1");
  if (o.micro_batches < 1) throw gpulab::UsageError("--micro-batches must be >= 1");
  if (!(o.compute_s > 0) || !(o.gradient_gb >= 0))
    throw gpulab::UsageError("--compute-s must be > 0, --gradient-gb >= 0");
}

TopoReport build_report(const Cluster& c, const ReportOptions& o) {
  const Cluster effective = effective_cluster(c);
  TopoReport r;
  r.cluster = c;
  r.options = o;
  r.tp_rows = tp_placement(effective, o);
  r.hierarchical = hierarchical(effective, o);
  r.blast = blast(effective, o);
  if (o.bubble || o.all) {
    r.bubble.emplace();
    for (int m : {1, 2, 4, 8, 16, 32, 64})
      r.bubble->push_back({m, pipeline_efficiency(m, o.stages)});
  }
  if (o.search_3d || o.all) r.search_3d = search(effective, o);
  if (o.gpudirect || o.all) r.gpudirect = gpudirect(c, o);
  if (o.blast_search || o.all)
    r.blast_search = search_min_blast_radius(effective, o.tp, message_bytes(o), o.layers);
  return r;
}

std::string render(const TopoReport& r) {
  const ReportOptions& o = r.options;
  const Cluster c = effective_cluster(r.cluster);
  std::string out;
  auto put = std::back_inserter(out);

  fmt::format_to(put,
                 "== all-reduce time for an {}-way tensor-parallel group ({:g} MB activation, x{} "
                 "layers/step) ==\n",
                 o.tp, o.message_mib, o.layers);
  fmt::format_to(put, "{:<28}{:<15}{:>13}   vs best\n", "placement", "links", "per-step (ms)");
  for (const auto& row : r.tp_rows)
    fmt::format_to(put, "{:<28}{:<15}{:>13.1f}{:>9.1f}x{}\n", row.name, row.link, ms(row.seconds),
                   row.vs_best, row.catastrophic ? "  <- catastrophic" : "");

  const HierarchicalResult& h = r.hierarchical;
  fmt::format_to(put, "\n== data-parallel gradient all-reduce, {} nodes x {} GPUs ({:g} MB) ==\n",
                 c.nodes, c.gpus_per_node, o.message_mib);
  // The curriculum's two labels differ in length and its colons are not aligned; kept as printed
  // there.
  fmt::format_to(put, "{:<41}: {:.1f} ms\n",
                 fmt::format("flat ring over all {} GPUs ({})", c.gpus(), short_link(h.flat_link)),
                 ms(h.flat));
  fmt::format_to(put, "{:<42}: {:.1f} ms   ({:.1f}x faster)\n",
                 "hierarchical (NVLink in-node, IB across)", ms(h.hierarchical),
                 h.flat / h.hierarchical);

  out += "\n== failure blast radius (1 GPU dies, synchronous job) ==\n";
  fmt::format_to(put, "TP-within-node placement : 1 GPU failure stalls {} GPUs ({})\n",
                 r.blast.within, stall_note(c, r.blast.within, o.tp));
  fmt::format_to(put, "TP-across-nodes placement: 1 GPU failure stalls {} GPUs ({})\n",
                 r.blast.across, stall_note(c, r.blast.across, o.tp));
  fmt::format_to(put,
                 "\n(The TP cost is multiplied by {} layers because tensor parallelism all-reduces "
                 "inside every layer: crossing nodes pays the slow link {} times per step, and "
                 "none of it can be hidden.)\n",
                 o.layers, o.layers);

  if (r.bubble) {
    gpulab::Table t;
    t.column("micro-batches m").column("stages s").column("efficiency m/(m+s-1)").column("bubble");
    for (const auto& b : *r.bubble)
      t.row({fmt::format("{}", b.micro_batches), fmt::format("{}", o.stages),
             fmt::format("{:.1f}%", 100 * b.efficiency),
             fmt::format("{:.1f}%", 100 * (1 - b.efficiency))});
    fmt::format_to(put, "\n== pipeline bubble: {} stages ==\n{}", o.stages, t.render());
  }

  if (r.search_3d) {
    const auto& results = *r.search_3d;
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
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& s = results[i];
      t.row({fmt::format("{}", i + 1), s.layout.name(), s.tp_link, s.pp_link, s.dp_link,
             fmt::format("{:.1f}", ms(s.compute)), fmt::format("{:.1f}", ms(s.bubble)),
             fmt::format("{:.1f}", ms(s.tp_comm)), fmt::format("{:.1f}", ms(s.pp_comm)),
             fmt::format("{:.1f}", ms(s.dp_comm)), fmt::format("{:.1f}", ms(s.total()))});
    }
    fmt::format_to(put,
                   "\n== 3D-parallel placement search: {} GPUs, {} layers, {} micro-batches, {:g} "
                   "s compute, {:g} GB gradients ==\n",
                   c.gpus(), o.layers, o.micro_batches, o.compute_s, o.gradient_gb);
    out += t.render();
    if (!results.empty()) {
      const auto& worst = results.back();
      const auto curriculum = std::find_if(results.begin(), results.end(), [](const StepTime& s) {
        return s.layout.tp == 8 && s.layout.pp == 4 && s.layout.fastest() == 't';
      });
      if (curriculum != results.end())
        fmt::format_to(put,
                       "the curriculum's layout (TP 8 in node, PP 4 across nodes) ranks #{} of {}: "
                       "{} at {:.1f} ms/step\n",
                       curriculum - results.begin() + 1, results.size(), curriculum->layout.name(),
                       ms(curriculum->total()));
      fmt::format_to(
          put,
          "searched {} layouts; best {} at {:.1f} ms/step, worst {} at {:.1f} ms/step ({:.1f}x)\n",
          results.size(), results.front().layout.name(), ms(results.front().total()),
          worst.layout.name(), ms(worst.total()), worst.total() / results.front().total());
    }
  }

  if (r.gpudirect) {
    const GpuDirectResult& g = *r.gpudirect;
    const Cluster& raw = r.cluster;
    gpulab::Table t;
    t.column("path", gpulab::Table::Align::kLeft)
        .column("bandwidth (GB/s)")
        .column("slower than HBM");
    for (const auto& p : g.paths)
      t.row({p.name, fmt::format("{:.1f}", p.bandwidth / 1e9),
             fmt::format("{:.1f}x", raw.hbm_bandwidth / p.bandwidth)});
    fmt::format_to(put,
                   "\n== GPUDirect RDMA off: cross-node bytes bounce through host memory ({:g} MB "
                   "all-reduce) ==\n",
                   o.message_mib);
    out += t.render();
    fmt::format_to(
        put, "the host bounce is the {:.0f}x cliff: HBM {:.2f} TB/s vs PCIe {:.0f} GB/s\n",
        raw.hbm_bandwidth / raw.pcie.bandwidth, raw.hbm_bandwidth / 1e12, raw.pcie.bandwidth / 1e9);
    fmt::format_to(put, "hierarchical all-reduce, GPUDirect on : {:.2f} ms\n", ms(g.on));
    fmt::format_to(put, "hierarchical all-reduce, GPUDirect off: {:.2f} ms   ({:.1f}x slower)\n",
                   ms(g.off), g.off / g.on);
  }

  if (r.blast_search) {
    const PlacementSearch& s = *r.blast_search;
    gpulab::Table t;
    t.column("nodes per TP group")
        .column("TP link", gpulab::Table::Align::kLeft)
        .column("inside 1 island", gpulab::Table::Align::kLeft)
        .column("blast radius (GPUs)")
        .column("TP per-step (ms)")
        .column("", gpulab::Table::Align::kLeft);
    for (std::size_t i = 0; i < s.options.size(); ++i) {
      const auto& p = s.options[i];
      t.row({fmt::format("{}", p.spread), p.link, p.island_ok ? "yes" : "no",
             fmt::format("{}", p.blast_radius), fmt::format("{:.1f}", ms(p.tp_step_seconds)),
             static_cast<int>(i) == s.best ? "<- best" : ""});
    }
    fmt::format_to(put,
                   "\n== failure-domain search: TP groups of {} over {} nodes x {} GPUs, NVLink "
                   "islands of {} node(s) ==\n",
                   o.tp, c.nodes, c.gpus_per_node, c.nodes_per_island);
    out += t.render();
    if (s.best < 0)
      fmt::format_to(put, "no placement keeps a TP group of {} inside one NVLink island\n", o.tp);
  }
  return out;
}

Json to_json(const TopoReport& r) {
  const ReportOptions& o = r.options;
  const Cluster& c = r.cluster;
  const double bytes = message_bytes(o);
  Json doc;
  doc["cluster"] = {{"name", c.name},
                    {"nodes", c.nodes},
                    {"gpus_per_node", c.gpus_per_node},
                    {"nodes_per_island", c.nodes_per_island},
                    {"gpudirect_rdma", c.gpudirect_rdma}};
  Json tp = Json::array();
  for (const auto& row : r.tp_rows)
    tp.push_back({{"placement", row.name},
                  {"link", row.link},
                  {"per_step_ms", ms(row.seconds)},
                  {"vs_best", row.vs_best}});
  doc["tp_placement"] = {
      {"tp", o.tp}, {"message_bytes", bytes}, {"layers", o.layers}, {"rows", tp}};
  const HierarchicalResult& h = r.hierarchical;
  doc["hierarchical"] = {{"gpus", c.gpus()},
                         {"message_bytes", bytes},
                         {"flat_ms", ms(h.flat)},
                         {"flat_link", h.flat_link},
                         {"hierarchical_ms", ms(h.hierarchical)},
                         {"speedup", h.flat / h.hierarchical}};
  doc["blast_radius"] = {{"tp_within_node", r.blast.within},
                         {"tp_across_nodes", r.blast.across},
                         {"across_spread_nodes", r.blast.widest}};
  if (r.bubble) {
    Json jr = Json::array();
    for (const auto& b : *r.bubble)
      jr.push_back(
          {{"micro_batches", b.micro_batches}, {"stages", o.stages}, {"efficiency", b.efficiency}});
    doc["pipeline_bubble"] = jr;
  }
  if (r.search_3d) {
    Json jr = Json::array();
    for (const auto& s : *r.search_3d)
      jr.push_back({{"layout", s.layout.name()},
                    {"tp", s.layout.tp},
                    {"pp", s.layout.pp},
                    {"dp", s.layout.dp},
                    {"step_ms", ms(s.total())},
                    {"compute_ms", ms(s.compute)},
                    {"bubble_ms", ms(s.bubble)},
                    {"tp_ms", ms(s.tp_comm)},
                    {"pp_ms", ms(s.pp_comm)},
                    {"dp_ms", ms(s.dp_comm)}});
    doc["search_3d"] = {{"layouts_searched", r.search_3d->size()}, {"results", jr}};
  }
  if (r.gpudirect) {
    Json jp = Json::array();
    for (const auto& p : r.gpudirect->paths)
      jp.push_back({{"path", p.name},
                    {"bandwidth_GBps", p.bandwidth / 1e9},
                    {"vs_hbm", c.hbm_bandwidth / p.bandwidth}});
    doc["gpudirect"] = {{"paths", jp},
                        {"hierarchical_on_ms", ms(r.gpudirect->on)},
                        {"hierarchical_off_ms", ms(r.gpudirect->off)}};
  }
  if (r.blast_search) {
    Json jr = Json::array();
    for (const auto& p : r.blast_search->options)
      jr.push_back({{"spread_nodes", p.spread},
                    {"link", p.link},
                    {"island_ok", p.island_ok},
                    {"blast_radius", p.blast_radius},
                    {"tp_step_ms", ms(p.tp_step_seconds)}});
    doc["blast_search"] = {{"options", jr}, {"best", r.blast_search->best}};
  }
  return doc;
}

// ---- calibrate ----

CalibrationReport run_calibration(int world, bool quick) {
  if (world < 2 || world > 16) throw gpulab::UsageError("--world must be 2..16");
  std::vector<double> sizes;
  for (double b = 4096; b <= (quick ? 1 << 20 : 16 << 20); b *= 4) sizes.push_back(b);
  CalibrationReport r;
  r.world = world;
  r.samples = measure_loopback_ring(world, sizes, quick ? 3 : 10, 2);
  r.fitted = fit_ring_link(world, r.samples);
  return r;
}

std::string render(const CalibrationReport& r) {
  gpulab::Table t;
  t.column("size (B)").column("measured (us)").column("model (us)").column("model/measured");
  for (const auto& s : r.samples) {
    const double model = ring_allreduce_time(r.world, s.bytes, r.fitted);
    t.row({fmt::format("{:.0f}", s.bytes), fmt::format("{:.1f}", s.seconds * 1e6),
           fmt::format("{:.1f}", model * 1e6), fmt::format("{:.2f}", model / s.seconds)});
  }
  std::string out = fmt::format(
      "== calibration: ring all-reduce, {} processes over 127.0.0.1 TCP (p08-ring-allreduce) ==\n",
      r.world);
  out += t.render();
  out += fmt::format("fitted link \"loopback\": bandwidth {:.2f} GB/s, latency {:.1f} us per hop\n",
                     r.fitted.bandwidth / 1e9, r.fitted.latency * 1e6);
  const Cluster ref = curriculum_cluster();
  out += fmt::format(
      "compare: NVLink {:.0f} GB/s, InfiniBand {:.0f} GB/s, {:.0f} us per hop in the curriculum's "
      "cluster\n",
      ref.nvlink.bandwidth / 1e9, ref.infiniband.bandwidth / 1e9, ref.nvlink.latency * 1e6);
  return out;
}

Json to_json(const CalibrationReport& r) {
  Json jr = Json::array();
  for (const auto& s : r.samples)
    jr.push_back({{"bytes", s.bytes},
                  {"measured_s", s.seconds},
                  {"model_s", ring_allreduce_time(r.world, s.bytes, r.fitted)}});
  Json doc;
  doc["calibration"] = {{"world", r.world},
                        {"bandwidth_GBps", r.fitted.bandwidth / 1e9},
                        {"latency_us", r.fitted.latency * 1e6},
                        {"points", jr}};
  return doc;
}

}  // namespace topo
