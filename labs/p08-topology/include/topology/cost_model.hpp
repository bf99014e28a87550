// The alpha-beta cost model of collectives on one kind of link: every hop
// pays a latency alpha, every byte pays 1/bandwidth. A ring over N ranks is as
// fast as its slowest link, so a group is costed on its bottleneck link.
#pragma once

#include <string>

namespace topo {

struct Link {
  std::string name;       // "NVLink", "InfiniBand", ...
  double bandwidth = 0;   // bytes per second (1e9 = 1 GB/s)
  double latency = 0;     // seconds per hop (alpha)
};

// Ring all-reduce: 2(N-1) hops, 2(N-1)/N * V bytes per rank.
double ring_allreduce_time(int n, double bytes, const Link& link);
// Reduce-scatter or all-gather alone: N-1 hops, (N-1)/N * V bytes per rank.
double reduce_scatter_time(int n, double bytes, const Link& link);
double all_gather_time(int n, double bytes, const Link& link);
// Unpipelined binary tree (Lab 01's --algo tree): reduce up, broadcast down,
// each of the 2*ceil(log2 N) levels moves the whole vector.
double tree_allreduce_time(int n, double bytes, const Link& link);

// Two-level all-reduce over `nodes` x `per_node` ranks: reduce-scatter inside
// each node on `intra`, ring all-reduce of each 1/per_node shard across nodes
// on `inter` (per_node rings run in parallel, one per GPU/NIC rail), all-gather
// inside the node. Only V/per_node crosses the slow links.
double hierarchical_allreduce_time(int per_node, int nodes, double bytes, const Link& intra, const Link& inter);

}  // namespace topo
