// Job traces: the CSV format `id,arrival,gpus,duration[,priority,tenant,cpus]`
// (a header line starting with "id", blank lines and '#' comments are
// skipped) and a seeded generator for synthetic traces of any size.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "cluster_sim/job.hpp"

namespace cluster_sim {

// Throws gpulab::UsageError("<source>:<line>: <what is wrong>") on a bad row.
std::vector<Job> parse_trace(std::istream& in, const std::string& source);
std::vector<Job> load_trace(const std::string& path);
void write_trace(std::ostream& out, const std::vector<Job>& jobs);

struct GeneratorConfig {
  std::size_t jobs = 1000;
  int nodes = 4;
  int gpus_per_node = 8;
  double load = 0.9;        // offered GPU load: arrivals are Poisson at this fraction of capacity
  double mean_duration = 100;
  int tenants = 4;
  int cpus_per_gpu = 8;
  double high_priority_fraction = 0.1;
  std::uint64_t seed = 1;
};

// Job sizes 1/2/4/8 GPUs (and 2-node gangs when the cluster has room), log-normal
// durations, Poisson arrivals: the same trace for the same config and seed.
std::vector<Job> generate_trace(const GeneratorConfig& cfg);

}  // namespace cluster_sim
