// Pipeline bubbles and the 3D-parallel placement search (TP x PP x DP).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "topology/cluster.hpp"

namespace topo {

// Fraction of a pipeline's time spent doing work: m / (m + s - 1) for m
// micro-batches over s stages (1F1B or GPipe; the bubble is s-1 slots).
double pipeline_efficiency(int micro_batches, int stages);

// What one training step asks of the cluster. The global batch is a fixed
// number of micro-batches, shared out over the DP replicas.
struct Workload {
  int layers = 80;
  double activation_bytes = 256.0 * (1 << 20);  // one micro-batch's activation: each layer's TP all-reduce message
  double gradient_bytes = 350e9;                 // all parameters' gradients (175B params in FP16)
  double compute_seconds = 32.0;                 // the whole step's compute on one GPU; divides over all GPUs
  int micro_batches = 32;                        // per step, all replicas together
};

// A 3D layout: sizes, and the order in which the dimensions are laid onto
// consecutive GPU ids (the first varies fastest, so it lands inside a node).
struct Layout3D {
  int tp = 1;
  int pp = 1;
  int dp = 1;
  std::array<char, 3> order{'t', 'p', 'd'};
  [[nodiscard]] std::string name() const;  // "TP8 x PP4 x DP1 (t,p)": dimensions of size > 1, fastest first
  [[nodiscard]] int size(char dim) const { return dim == 't' ? tp : dim == 'p' ? pp : dp; }
  // The dimension laid out inside a node: the first in `order` of size > 1 ('-' if none).
  [[nodiscard]] char fastest() const {
    for (char dim : order)
      if (size(dim) > 1) return dim;
    return '-';
  }
};

struct StepTime {
  Layout3D layout;
  double compute = 0;     // busy compute per GPU
  double bubble = 0;      // idle pipeline slots
  double tp_comm = 0;     // TP all-reduces on the critical path
  double pp_comm = 0;     // activations between stages
  double dp_comm = 0;     // gradient all-reduce (not overlapped)
  std::string tp_link, pp_link, dp_link;
  [[nodiscard]] double total() const { return compute + bubble + tp_comm + pp_comm + dp_comm; }
};

// The step time of one layout on the cluster (all GPUs used).
StepTime step_time(const Cluster& c, const Workload& w, const Layout3D& layout);

// Every layout with tp*pp*dp = all GPUs, pp dividing the layer count and dp
// dividing the micro-batches, in every dimension order; sorted fastest first.
std::vector<StepTime> search_3d(const Cluster& c, const Workload& w);

}  // namespace topo
