#include "paged_kv/eviction.hpp"

#include <algorithm>
#include <deque>
#include <optional>
#include <stdexcept>
#include <vector>

#include "paged_kv/sequence.hpp"

namespace paged_kv {
namespace {

Token token_of(std::size_t seq, std::size_t pos) {
  return static_cast<Token>(seq * 100'000 + pos);
}

struct Live {
  std::size_t id;
  std::size_t length = 0;  // tokens it holds (prompt + generated so far)
  std::optional<Sequence> gpu;
  std::vector<BlockId> host;  // swapped-out blocks, in table order
  std::size_t last_used = 0;
  bool started = false;
};

}  // namespace

PressureRun run_under_pressure(const PressureSpec& spec, Recovery policy,
                               const RecoveryCost& cost) {
  if (spec.sequences == 0 || spec.prompt == 0 || spec.block_size == 0 || spec.pool_blocks == 0)
    throw std::invalid_argument("sequences, prompt, block size and pool must all be at least 1");
  const std::size_t total = spec.prompt + spec.generate;
  if (blocks_for(total, spec.block_size) + 1 > spec.pool_blocks)
    throw std::invalid_argument("one sequence alone needs more blocks than the pool holds");
  BlockAllocator gpu(spec.pool_blocks, spec.block_size);
  BlockAllocator host(std::max<std::size_t>(spec.host_blocks, 1), spec.block_size);
  PressureRun run;
  run.policy = policy;

  std::vector<Live> seqs(spec.sequences);
  for (std::size_t i = 0; i < seqs.size(); ++i) seqs[i].id = i;
  std::deque<std::size_t> waiting;
  for (std::size_t i = 0; i < seqs.size(); ++i) waiting.push_back(i);
  std::vector<std::size_t> running;
  std::size_t finished = 0;

  auto verify = [&](const Live& s) {
    for (std::size_t p = 0; p < s.length; ++p)
      if (s.gpu->at(p) != token_of(s.id, p)) return false;
    return true;
  };
  auto preempt = [&](std::size_t victim) {
    Live& s = seqs[victim];
    ++run.preemptions;
    if (policy == Recovery::kSwap) {
      std::vector<BlockId> out;
      for (const BlockId b : s.gpu->block_table()) {
        const auto h = host.allocate();
        if (!h) break;
        std::copy_n(gpu.slots(b).begin(), spec.block_size, host.slots(*h).begin());
        out.push_back(*h);
      }
      if (out.size() == s.gpu->block_table().size()) {
        run.blocks_swapped_out += out.size();
        s.host = std::move(out);
      } else {
        for (const BlockId h : out) host.release(h);  // host pool full: fall back to recompute
        ++run.swap_fallbacks;
      }
    }
    s.gpu.reset();  // the GPU blocks go back to the pool
    std::erase(running, victim);
    waiting.push_front(victim);  // preempted work resumes before new work
  };
  auto resume = [&](std::size_t i) -> bool {
    Live& s = seqs[i];
    const std::size_t tokens = s.started ? s.length : spec.prompt;
    if (gpu.free_blocks() < blocks_for(tokens, spec.block_size) + 1)
      return false;  // +1: room to grow
    s.gpu.emplace(gpu);
    if (!s.host.empty()) {
      std::vector<BlockId> blocks;
      for (const BlockId h : s.host) {
        const BlockId b = *gpu.allocate();
        std::copy_n(host.slots(h).begin(), spec.block_size, gpu.slots(b).begin());
        host.release(h);
        blocks.push_back(b);
      }
      run.blocks_swapped_in += blocks.size();
      s.host.clear();
      s.gpu.emplace(gpu, std::move(blocks), s.length);
      run.contents_ok = run.contents_ok && verify(s);
    } else {
      if (s.started)
        run.tokens_recomputed += s.length;  // a fresh prompt's prefill is not a recovery cost
      s.length = tokens;
      for (std::size_t p = 0; p < tokens; ++p) s.gpu->append(token_of(s.id, p));
      run.contents_ok = run.contents_ok && verify(s);
      s.started = true;
    }
    running.push_back(i);
    return true;
  };

  while (finished < seqs.size()) {
    ++run.steps;
    while (!waiting.empty() && resume(waiting.front())) waiting.pop_front();
    if (running.empty()) throw std::logic_error("no sequence can run (pool too small)");
    // One decode step: every running sequence appends its next token.
    const std::vector<std::size_t> batch = running;
    for (const std::size_t i : batch) {
      Live& s = seqs[i];
      if (!s.gpu) continue;  // preempted earlier in this step
      while (s.gpu->append(token_of(i, s.length)) != Status::kOk) {
        // Pool dry: preempt the least recently used other sequence (ties: the newest).
        std::optional<std::size_t> victim;
        for (const std::size_t j : running)
          if (j != i && (!victim || seqs[j].last_used < seqs[*victim].last_used ||
                         (seqs[j].last_used == seqs[*victim].last_used && j > *victim)))
            victim = j;
        if (!victim) throw std::logic_error("pool too small for a single sequence");
        preempt(*victim);
      }
      ++s.length;
      s.last_used = run.steps;
      if (s.length == total) {
        s.gpu.reset();
        std::erase(running, i);
        ++finished;
      }
    }
  }
  const double block_bytes = static_cast<double>(cost.kv_bytes_per_token * spec.block_size);
  run.recovery_ms = static_cast<double>(run.tokens_recomputed) * cost.prefill_ms_per_token +
                    static_cast<double>(run.blocks_swapped_out + run.blocks_swapped_in) *
                        block_bytes / (cost.pcie_gb_per_s * 1e9) * 1000.0;
  return run;
}

}  // namespace paged_kv
