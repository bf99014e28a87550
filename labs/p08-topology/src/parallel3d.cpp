#include "topology/parallel3d.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <set>

#include "topology/cost_model.hpp"

namespace topo {
namespace {

// GPU ids of the group along dimension `dim` through GPU coordinate `coord`.
struct Coords {
  int t = 0, p = 0, d = 0;
};

int gpu_of(const Layout3D& l, Coords x) {
  // The first dimension in `order` varies fastest.
  int id = 0;
  int stride = 1;
  for (char dim : l.order) {
    const int size = dim == 't' ? l.tp : dim == 'p' ? l.pp : l.dp;
    const int v = dim == 't' ? x.t : dim == 'p' ? x.p : x.d;
    id += v * stride;
    stride *= size;
  }
  return id;
}

// The slowest link among a group's ring neighbours, over every group of that dimension.
const Link& dimension_link(const Cluster& c, const Layout3D& l, char dim) {
  const Link* worst = &c.nvlink;
  const int size = dim == 't' ? l.tp : dim == 'p' ? l.pp : l.dp;
  if (size < 2) return *worst;
  for (int t = 0; t < l.tp; ++t)
    for (int p = 0; p < l.pp; ++p)
      for (int d = 0; d < l.dp; ++d) {
        Coords a{t, p, d};
        Coords b = a;
        if (dim == 't') b.t = (t + 1) % l.tp;
        if (dim == 'p') b.p = (p + 1) % l.pp;
        if (dim == 'd') b.d = (d + 1) % l.dp;
        const Link& link = c.link_between(gpu_of(l, a), gpu_of(l, b));
        if (link.bandwidth < worst->bandwidth) worst = &link;
      }
  return *worst;
}

}  // namespace

double pipeline_efficiency(int micro_batches, int stages) {
  return static_cast<double>(micro_batches) / (micro_batches + stages - 1);
}

std::string Layout3D::name() const {
  std::string dims;  // the order of the dimensions that exist, fastest first
  for (char dim : order)
    if (size(dim) > 1) dims += dims.empty() ? std::string(1, dim) : std::string{',', dim};
  return fmt::format("TP{} x PP{} x DP{} ({})", tp, pp, dp, dims.empty() ? "-" : dims);
}

StepTime step_time(const Cluster& c, const Workload& w, const Layout3D& l) {
  StepTime s;
  s.layout = l;
  const Link& tp_link = dimension_link(c, l, 't');
  const Link& pp_link = dimension_link(c, l, 'p');
  const Link& dp_link = dimension_link(c, l, 'd');
  s.tp_link = l.tp > 1 ? tp_link.name : "-";
  s.pp_link = l.pp > 1 ? pp_link.name : "-";
  s.dp_link = l.dp > 1 ? dp_link.name : "-";

  // One micro-batch through one stage: its share of the compute, a TP
  // all-reduce per layer of the stage, and the activation handed on to the
  // next stage (each TP rank sends its 1/tp shard in parallel).
  const int m = w.micro_batches / l.dp;  // micro-batches per replica
  const double compute_mb = w.compute_seconds / w.micro_batches / (l.tp * l.pp);
  const double tp_mb = (w.layers / l.pp) * ring_allreduce_time(l.tp, w.activation_bytes, tp_link);
  const double pp_mb = l.pp > 1 ? w.activation_bytes / l.tp / pp_link.bandwidth + pp_link.latency : 0;
  const double slot = compute_mb + tp_mb + pp_mb;
  s.compute = compute_mb * m;
  s.tp_comm = tp_mb * m;
  s.pp_comm = pp_mb * m;
  s.bubble = slot * (l.pp - 1);  // m useful slots, then s-1 idle ones: efficiency m/(m+s-1)
  // Each GPU holds 1/(tp*pp) of the parameters and all-reduces their gradients over DP.
  s.dp_comm = ring_allreduce_time(l.dp, w.gradient_bytes / (l.tp * l.pp), dp_link);
  return s;
}

std::vector<StepTime> search_3d(const Cluster& c, const Workload& w) {
  std::vector<StepTime> out;
  std::set<std::string> seen;  // orders differing only in size-1 dimensions are the same layout
  const int gpus = c.gpus();
  std::array<char, 3> order{'d', 'p', 't'};  // sorted, for next_permutation
  do {
    for (int tp = 1; tp <= gpus; ++tp) {
      if (gpus % tp != 0) continue;
      for (int pp = 1; pp <= gpus / tp; ++pp) {
        if ((gpus / tp) % pp != 0 || w.layers % pp != 0 || w.micro_batches % (gpus / tp / pp) != 0) continue;
        Layout3D l{tp, pp, gpus / tp / pp, order};
        std::string key = fmt::format("{}/{}/{}/", tp, pp, l.dp);
        for (char dim : order)
          if ((dim == 't' ? tp : dim == 'p' ? pp : l.dp) > 1) key += dim;
        if (!seen.insert(key).second) continue;
        out.push_back(step_time(c, w, l));
      }
    }
  } while (std::next_permutation(order.begin(), order.end()));
  std::stable_sort(out.begin(), out.end(), [](const StepTime& a, const StepTime& b) { return a.total() < b.total(); });
  return out;
}

}  // namespace topo
