// A job as the trace describes it: when it arrives, how many GPUs it needs all
// at once, how long it runs on them, and (for the extensions) its priority,
// tenant and CPU demand.
#pragma once

#include <string>

namespace cluster_sim {

struct Job {
  std::string id;
  double arrival = 0;   // time units from t=0
  int gpus = 1;         // all needed simultaneously (a gang when > GPUs per node)
  double duration = 1;  // run time on an ideal placement
  int priority = 0;     // higher runs first; only preemption evicts by it
  std::string tenant = "default";
  int cpus = 0;         // 0 = CPU demand not modelled
  int line = 0;         // trace line, for error messages (0 = not from a file)
};

}  // namespace cluster_sim
