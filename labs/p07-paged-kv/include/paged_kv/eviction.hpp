// Eviction under memory pressure: sequences grow until the pool runs dry, the
// least recently used running sequence is preempted, and later resumed by one
// of two recovery policies (vLLM's PreemptionMode):
//   recompute — drop its KV and prefill all of its tokens again;
//   swap      — copy its blocks to a host-memory pool and back over PCIe.
// Both run on real pools, and every resumed sequence's contents are checked.
#pragma once

#include <cstddef>
#include <cstdint>

namespace paged_kv {

enum class Recovery { kRecompute, kSwap };

struct RecoveryCost {
  double prefill_ms_per_token = 0.02;         // what recomputing one token costs
  double pcie_gb_per_s = 64;                  // host <-> device, each way (PCIe 5.0 x16)
  std::uint64_t kv_bytes_per_token = 131072;  // Llama-3-8B, bf16
  // One token's KV out and back again, in ms.
  [[nodiscard]] double swap_round_trip_ms_per_token() const {
    return 2.0 * static_cast<double>(kv_bytes_per_token) / (pcie_gb_per_s * 1e9) * 1000.0;
  }
};

struct PressureSpec {
  std::size_t sequences = 24;
  std::size_t prompt = 512;
  std::size_t generate = 512;
  std::size_t pool_blocks = 1024;
  std::size_t host_blocks = 4096;
  std::size_t block_size = 16;
};

struct PressureRun {
  Recovery policy = Recovery::kRecompute;
  std::size_t steps = 0;  // decode steps until every sequence finished
  std::size_t preemptions = 0;
  std::size_t swap_fallbacks = 0;  // host pool full: recomputed instead
  std::uint64_t blocks_swapped_out = 0;
  std::uint64_t blocks_swapped_in = 0;
  std::uint64_t tokens_recomputed = 0;
  double recovery_ms = 0;   // cost model applied to the counts above
  bool contents_ok = true;  // every resumed sequence held exactly its tokens
};

// Throws std::invalid_argument when the spec cannot run (a single sequence
// larger than the pool, zero sizes).
PressureRun run_under_pressure(const PressureSpec& spec, Recovery policy, const RecoveryCost& cost);

}  // namespace paged_kv
