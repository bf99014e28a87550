// How many GPUs one GPU failure stalls in a synchronous job, and the
// placement that keeps that number smallest.
//
// Rule: the failed GPU's TP group stops; recovery drains whole nodes, so every
// TP group with a GPU on a drained node stops too, transitively. A group that
// spans all nodes therefore takes the whole job down with it.
#pragma once

#include <vector>

#include "topology/placement.hpp"

namespace topo {

// GPUs stalled when `failed_gpu` dies, given the job's TP groups.
int blast_radius(const Cluster& c, const std::vector<Group>& groups, int failed_gpu);
// The worst case over every GPU of the job.
int worst_blast_radius(const Cluster& c, const std::vector<Group>& groups);

struct PlacementOption {
  int spread = 1;            // nodes per TP group
  bool island_ok = false;    // every TP group inside one NVLink island
  int blast_radius = 0;      // worst case, GPUs
  double tp_step_seconds = 0;
  std::string link;          // the TP ring's bottleneck link
};

// Every even spread of TP groups of `tp` over the cluster, and the index of the
// best: smallest blast radius among island-respecting placements, then fastest.
// `best` is -1 when no placement keeps TP inside an island.
struct PlacementSearch {
  std::vector<PlacementOption> options;
  int best = -1;
};
PlacementSearch search_min_blast_radius(const Cluster& c, int tp, double bytes, int layers);

}  // namespace topo
