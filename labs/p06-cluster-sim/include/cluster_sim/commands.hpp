// What each cluster-sim subcommand computes once its flags are parsed: main.cpp declares the
// flags, calls one of these and prints (or emits) the result.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cluster_sim/scenarios.hpp"
#include "cluster_sim/simulator.hpp"
#include "cluster_sim/trace.hpp"

namespace cluster_sim {

// `cluster-sim run`: the flags as given, before they are checked against each other.
struct RunRequest {
  SimConfig cfg;
  std::string policy = "best_fit";
  std::string queue = "fifo";
  bool gang = false;
  std::string trace_path;      // a CSV trace, or
  std::size_t generate = 0;    // this many synthetic jobs (cfg's shape, seed)
  std::string inventory_path;  // the cluster's shape from node inventories (overrides cfg's)
  std::uint64_t seed = 1;
};

struct RunOutcome {
  SimConfig cfg;  // as simulated: policy, queue and the inventory's shape applied
  std::vector<Job> jobs;
  SimResult result;
};

// Checks the request (gpulab::UsageError naming the flag), loads or generates the trace and
// simulates it.
RunOutcome run_trace(const RunRequest& request);

// `cluster-sim generate`: the synthetic trace as CSV text.
std::string generated_trace_csv(const GeneratorConfig& cfg);

// The trace at `path`, or the built-in scenario trace when no path is given.
std::vector<Job> trace_or_scenario(const std::string& path, std::string_view scenario);

// `cluster-sim extensions`: all five extension comparisons with their default settings.
std::vector<Report> all_extensions();

// `cluster-sim` with no subcommand: the curriculum's policy table and gang demo.
std::vector<Report> curriculum_tables();

}  // namespace cluster_sim
