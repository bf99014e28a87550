// The wrong-NIC drill's evidence (--rank-netns): which interface each rank's
// ring connections used and the bus bandwidth it got there, printed and, with
// --metrics-out, as metrics the SLO pack alerts on (nic.rules.yml).
#pragma once

#include <cstddef>
#include <vector>

#include "gpulab/json.hpp"
#include "gpulab/prom_text.hpp"
#include "ring_allreduce/launcher.hpp"

namespace ring {

// nccl-tests' bus bandwidth of one rank's ring all-reduce of `vector_bytes`:
// vector_bytes / seconds * 2(N-1)/N, in bytes per second.
double rank_busbw(std::size_t vector_bytes, int world, double seconds);

// One series per finished rank that ran in a namespace:
//   allreduce_bus_bandwidth_bytes_per_second{rank, iface}  its ring all-reduce's bus bandwidth
//   allreduce_interface_info{rank, iface, address}         1: the interface its connections used
gpulab::prom::Exposition interface_metrics(const std::vector<RankOutcome>& ranks, std::size_t vector_bytes,
                                           int world);

// The same per rank for --json (rank, iface, address, rule, busbw_bytes_per_second); null on one host.
gpulab::Json interfaces_json(const std::vector<RankOutcome>& ranks, std::size_t vector_bytes, int world);

// "interface: ... chosen by ..." and a line per rank; nothing when the ranks
// ran on one host (no interface was chosen).
void print_interfaces(const std::vector<RankOutcome>& ranks, std::size_t vector_bytes, int world);

}  // namespace ring
