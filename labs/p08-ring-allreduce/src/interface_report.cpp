#include "ring_allreduce/interface_report.hpp"

#include <fmt/format.h>

#include <string>

#include "ring_allreduce/experiments.hpp"

namespace ring {
namespace {

bool chose_interface(const RankOutcome& r) { return !r.iface.empty(); }

double busbw_of(const RankOutcome& r, std::size_t vector_bytes, int world) {
  return rank_busbw(vector_bytes, world, r.report.at("ring_seconds").get<double>());
}

}  // namespace

double rank_busbw(std::size_t vector_bytes, int world, double seconds) {
  return seconds > 0 ? static_cast<double>(vector_bytes) / seconds * busbw_factor(world) : 0;
}

gpulab::prom::Exposition interface_metrics(const std::vector<RankOutcome>& ranks, std::size_t vector_bytes,
                                           int world) {
  gpulab::prom::Exposition e;
  bool any = false;
  for (const auto& r : ranks) any = any || chose_interface(r);
  if (!any) return e;
  auto& busbw = e.gauge("allreduce_bus_bandwidth_bytes_per_second",
                        "Bus bandwidth of this rank's ring all-reduce (nccl-tests: V / t * 2(N-1)/N), bytes/s.");
  auto& info = e.gauge("allreduce_interface_info", "1: the network interface this rank's ring connections used.");
  for (const auto& r : ranks) {
    if (!chose_interface(r) || r.status != RankOutcome::Status::kOk) continue;
    const std::string rank = std::to_string(r.rank);
    busbw.set({{"rank", rank}, {"iface", r.iface}}, busbw_of(r, vector_bytes, world));
    info.set({{"rank", rank}, {"iface", r.iface}, {"address", r.address}}, 1);
  }
  return e;
}

gpulab::Json interfaces_json(const std::vector<RankOutcome>& ranks, std::size_t vector_bytes, int world) {
  if (ranks.empty() || !chose_interface(ranks.front())) return nullptr;
  gpulab::Json out = gpulab::Json::array();
  for (const auto& r : ranks) {
    if (r.status != RankOutcome::Status::kOk) continue;
    out.push_back({{"rank", r.rank},
                   {"iface", r.iface},
                   {"address", r.address},
                   {"rule", r.iface_rule},
                   {"busbw_bytes_per_second", busbw_of(r, vector_bytes, world)}});
  }
  return out;
}

void print_interfaces(const std::vector<RankOutcome>& ranks, std::size_t vector_bytes, int world) {
  if (ranks.empty() || !chose_interface(ranks.front())) return;
  fmt::print("  ranks on separate hosts (--rank-netns); interface chosen by {}\n", ranks.front().iface_rule);
  for (const auto& r : ranks) {
    if (r.status != RankOutcome::Status::kOk) continue;
    fmt::print("    rank {}: {} {:<15}  ring all-reduce {:.4f} s, busbw {:.1f} MB/s\n", r.rank, r.iface, r.address,
               r.report.at("ring_seconds").get<double>(), busbw_of(r, vector_bytes, world) / 1e6);
  }
}

}  // namespace ring
