// The serving engine: continuous batching over a paged KV cache, with P07's
// batching policy (batching::BatchPolicy, shared with batching-sim).
//
// Each step() builds one batch under a token budget, decode first: every
// running sequence that is generating contributes its one pending token;
// sequences still in their prompt get chunks of what budget is left (chunked
// prefill); then waiting requests are admitted, oldest first, while there are
// sequence slots, budget and KV blocks. A request's K/V lives in P07's paged
// blocks (paged_kv::Sequence is its block table); with the prefix cache on, a
// prompt adopts the cached full blocks of an earlier identical prefix and
// skips their prefill. When a generating sequence needs a new block and the
// pool is dry, the most recently admitted sequence is preempted: its blocks
// are released and it goes back to the head of the queue to be recomputed
// (its tokens so far are kept, so it continues where it was). The engine is
// single-threaded; EngineLoop runs it for the server.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "batching/batch_policy.hpp"
#include "gpulab/expected.hpp"
#include "paged_kv/block_allocator.hpp"
#include "paged_kv/prefix_cache.hpp"
#include "paged_kv/sequence.hpp"
#include "serving/batch_forward.hpp"
#include "serving/finish.hpp"
#include "serving/kv_store.hpp"
#include "serving/model.hpp"
#include "serving/sampler.hpp"

namespace serving {

using RequestId = std::uint64_t;

struct EngineOptions {
  std::size_t block_size = 16;
  std::size_t kv_blocks = 1024;        // pool size; block_size * kv_blocks must hold one full context
  std::size_t max_running = 32;        // sequences in a batch (P07's max_batch)
  std::size_t max_batched_tokens = 256;  // tokens per step (P07's prefill chunk budget, decodes included)
  std::size_t max_waiting = 64;        // queued requests beyond which submit() refuses (HTTP 429)
  bool prefix_cache = true;
  // Static batching, the baseline continuous batching is measured against: a
  // batch is admitted only when the previous one has fully drained.
  bool static_batching = false;
};

// Throws std::invalid_argument naming the option when it is zero or the pool
// cannot hold one sequence of the model's full context (preemption could then
// never make progress).
void validate(const EngineOptions& o, const ModelConfig& model);

// What one step produced for one request: a token, a finish, or both.
struct TokenEvent {
  RequestId id = 0;
  std::optional<TokenId> token;
  std::optional<FinishReason> finish;
  std::size_t prompt_tokens = 0;
  std::size_t cached_tokens = 0;  // prompt tokens whose prefill the prefix cache skipped
};

struct EngineStats {
  std::size_t running = 0, waiting = 0;
  std::size_t kv_blocks_used = 0, kv_blocks_free = 0;
  std::uint64_t prefix_lookups = 0, prefix_hits = 0;  // full prompt blocks looked up / adopted
  std::uint64_t prefix_tokens_skipped = 0;            // prefill tokens not computed thanks to hits
  std::uint64_t preemptions = 0;
  std::uint64_t steps = 0;
  std::uint64_t prefill_tokens = 0;    // prompt (and recomputed) tokens run through the model
  std::uint64_t decode_rows = 0;       // rows that fed back a generated token (one per generating sequence a step)
  std::uint64_t generated_tokens = 0;  // tokens sampled
  std::uint64_t finished = 0;
  double matmul_flops = 0;
};

enum class SubmitError { kQueueFull, kInvalid };
struct Refusal {
  SubmitError kind;
  std::string field;    // "prompt", "max_tokens", ...
  std::string message;  // "prompt: 300 tokens; the model's context is 256"
};

class Engine {
 public:
  Engine(const Model& model, const EngineOptions& options);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Queues a request; a refusal says which field was wrong, or that the queue is full.
  [[nodiscard]] gpulab::Expected<RequestId> submit(std::vector<TokenId> prompt, const SamplingParams& params,
                                                  Refusal* why = nullptr);
  // The request ends at the next step with FinishReason::kCancelled; unknown or finished ids are ignored.
  void cancel(RequestId id);
  // One batch: the events of every request that got a token or finished.
  std::vector<TokenEvent> step();
  [[nodiscard]] bool idle() const { return running_.empty() && waiting_.empty() && cancels_.empty(); }
  [[nodiscard]] EngineStats stats() const;
  [[nodiscard]] const EngineOptions& options() const { return options_; }
  [[nodiscard]] const Model& model() const { return *model_; }

 private:
  struct Seq;
  bool admit(Seq& s);
  void preempt(std::size_t running_index);
  void release(Seq& s);

  const Model* model_;
  EngineOptions options_;
  batching::BatchPolicy policy_;  // admission, decode first, chunking: P07's rules
  paged_kv::BlockAllocator pool_;
  std::unique_ptr<paged_kv::PrefixCache> cache_;
  KvStore kv_;
  BatchForward forward_;
  std::deque<std::unique_ptr<Seq>> waiting_;
  std::vector<std::unique_ptr<Seq>> running_;  // admission order: the tail is preempted first
  std::vector<RequestId> cancels_;
  RequestId next_id_ = 1;
  EngineStats stats_;
};

}  // namespace serving
