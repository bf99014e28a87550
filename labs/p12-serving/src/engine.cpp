#include "serving/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace serving {

struct Engine::Seq {
  RequestId id = 0;
  std::vector<TokenId> tokens;  // prompt, then every emitted token
  std::size_t prompt_len = 0;
  SamplingParams params;
  gpulab::Rng rng{0};
  std::optional<paged_kv::Sequence> kv;  // block table while admitted
  std::size_t computed = 0;              // leading tokens whose K/V is in the cache
  std::size_t take = 0;                  // tokens scheduled this step
  bool decoding = false;                 // this step's token is a generated one, not prompt
  std::size_t cached = 0;                // prompt tokens skipped by the prefix cache (first admission)
  bool admitted_once = false;
  [[nodiscard]] std::size_t emitted() const { return tokens.size() - prompt_len; }
};

void validate(const EngineOptions& o, const ModelConfig& model) {
  auto positive = [](std::size_t v, const char* name) {
    if (v == 0) throw std::invalid_argument(fmt::format("{} must be at least 1", name));
  };
  positive(o.block_size, "--block-size");
  positive(o.kv_blocks, "--kv-blocks");
  positive(o.max_running, "--max-running");
  positive(o.max_batched_tokens, "--max-batched-tokens");
  positive(o.max_waiting, "--max-waiting");
  if (o.block_size * o.kv_blocks < model.max_context)
    throw std::invalid_argument(fmt::format(
        "--kv-blocks ({}) x --block-size ({}) must hold one full context of {} tokens", o.kv_blocks, o.block_size,
        model.max_context));
}

Engine::Engine(const Model& model, const EngineOptions& options)
    : model_(&model),
      options_((validate(options, model.config()), options)),
      policy_{options.max_running, options.max_batched_tokens, /*budget_counts_decodes=*/true},
      pool_(options.kv_blocks, options.block_size),
      kv_(model.backend(), model.config().layers, options.kv_blocks, options.block_size, model.config().kv_dim()),
      forward_(model, kv_, options.block_size) {
  if (options_.prefix_cache) cache_ = std::make_unique<paged_kv::PrefixCache>(pool_);
}

Engine::~Engine() {
  // Block tables go back to the pool before the prefix cache and the pool go.
  for (auto& s : running_) s->kv.reset();
}

gpulab::Expected<RequestId> Engine::submit(std::vector<TokenId> prompt, const SamplingParams& params,
                                           Refusal* why) {
  const auto& c = model_->config();
  auto refuse = [&](SubmitError kind, std::string field, std::string message) -> gpulab::Expected<RequestId> {
    if (why) *why = Refusal{kind, field, message};
    return gpulab::Error{message};
  };
  if (prompt.empty()) return refuse(SubmitError::kInvalid, "prompt", "prompt: must hold at least one token");
  if (prompt.size() >= c.max_context)
    return refuse(SubmitError::kInvalid, "prompt",
                  fmt::format("prompt: {} tokens; the model's context is {}, so at most {}", prompt.size(),
                              c.max_context, c.max_context - 1));
  for (std::size_t i = 0; i < prompt.size(); ++i)
    if (prompt[i] < 0 || static_cast<std::size_t>(prompt[i]) >= c.vocab)
      return refuse(SubmitError::kInvalid, "prompt",
                    fmt::format("prompt: token {} at index {} is outside the vocab of {}", prompt[i], i, c.vocab));
  if (params.max_tokens == 0) return refuse(SubmitError::kInvalid, "max_tokens", "max_tokens: must be at least 1");
  if (!(params.temperature >= 0))
    return refuse(SubmitError::kInvalid, "temperature", "temperature: must be >= 0");
  if (!(params.top_p > 0 && params.top_p <= 1))
    return refuse(SubmitError::kInvalid, "top_p", "top_p: must be in (0, 1]");
  if (waiting_.size() >= options_.max_waiting)
    return refuse(SubmitError::kQueueFull, "",
                  fmt::format("queue full: {} requests waiting (--max-waiting)", waiting_.size()));
  auto s = std::make_unique<Seq>();
  s->id = next_id_++;
  s->prompt_len = prompt.size();
  s->tokens = std::move(prompt);
  s->params = params;
  s->rng = gpulab::Rng(params.seed);
  const RequestId id = s->id;
  waiting_.push_back(std::move(s));
  return id;
}

void Engine::cancel(RequestId id) { cancels_.push_back(id); }

void Engine::release(Seq& s) {
  s.kv.reset();  // tail block first (paged_kv::Sequence::release), cached blocks stay findable
  s.computed = 0;
}

bool Engine::admit(Seq& s) {
  const std::size_t bs = options_.block_size;
  std::size_t adopted = 0;
  if (cache_) {
    auto a = cache_->admit(s.tokens);
    if (a.status != paged_kv::Status::kOk) return false;
    adopted = a.cached_tokens / bs;
    s.kv.emplace(std::move(a.sequence));
  } else {
    paged_kv::Sequence seq(pool_);
    if (seq.append(s.tokens) != paged_kv::Status::kOk) return false;  // seq's destructor frees what it took
    s.kv.emplace(std::move(seq));
  }
  const auto table = s.kv->block_table();
  // Adopted blocks count only while their K/V is really there: a block indexed
  // by a request that was preempted before computing it is recomputed here.
  std::size_t ready = 0;
  while (ready < adopted && kv_.filled(table[ready]) == bs) ++ready;
  for (std::size_t b = adopted; b < table.size(); ++b) kv_.clear(table[b]);
  s.computed = ready * bs;
  if (!s.admitted_once) {
    s.cached = s.computed;
    s.admitted_once = true;
  }
  stats_.prefix_tokens_skipped += s.computed;
  return true;
}

void Engine::preempt(std::size_t index) {
  auto victim = std::move(running_[index]);
  running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(index));
  release(*victim);
  waiting_.push_front(std::move(victim));
  ++stats_.preemptions;
}

std::vector<TokenEvent> Engine::step() {
  std::vector<TokenEvent> events;
  auto finish_event = [&](const Seq& s, FinishReason why) {
    events.push_back({s.id, std::nullopt, why, s.prompt_len, s.cached});
    ++stats_.finished;
  };
  for (const RequestId id : cancels_) {
    auto match = [id](const std::unique_ptr<Seq>& s) { return s->id == id; };
    if (auto it = std::find_if(running_.begin(), running_.end(), match); it != running_.end()) {
      release(**it);
      finish_event(**it, FinishReason::kCancelled);
      running_.erase(it);
    } else if (auto w = std::find_if(waiting_.begin(), waiting_.end(), match); w != waiting_.end()) {
      finish_event(**w, FinishReason::kCancelled);
      waiting_.erase(w);
    }
  }
  cancels_.clear();

  for (auto& s : running_) {
    s->take = 0;
    s->decoding = false;
  }
  // Decode first (P07's BatchPolicy, its budget holding the decodes): a
  // generating sequence's pending token may need a new block.
  std::size_t decoded = 0;
  for (std::size_t i = 0; i < running_.size() && decoded < policy_.decode_rows(running_.size());) {
    Seq& s = *running_[i];
    if (s.tokens.size() - s.computed != 1) {
      ++i;
      continue;
    }
    bool preempted_self = false;
    while (s.kv->length() < s.tokens.size()) {
      const std::size_t blocks_before = s.kv->block_table().size();
      const std::size_t cow_before = s.kv->cow_copies();
      if (s.kv->append(s.tokens[s.kv->length()]) == paged_kv::Status::kOk) {
        // Decode writes only into its own partial tail block, never a shared one.
        if (s.kv->cow_copies() != cow_before)
          throw std::logic_error("serving: a decode append copied a shared block");
        if (s.kv->block_table().size() != blocks_before) kv_.clear(s.kv->block_table().back());
        continue;
      }
      const std::size_t victim = running_.size() - 1;
      preempt(victim);
      if (victim == i) {
        preempted_self = true;
        break;
      }
    }
    if (preempted_self) continue;  // running_[i] is now the next sequence, or past the end
    s.take = 1;
    s.decoding = s.computed >= s.prompt_len;
    ++decoded;
    ++i;
  }
  std::size_t budget = policy_.prompt_budget(decoded);
  // Chunked prefill of admitted prompts with what budget is left.
  for (auto& sp : running_) {
    if (budget == 0) break;
    Seq& s = *sp;
    const std::size_t pending = s.tokens.size() - s.computed;
    if (s.take > 0 || pending <= 1) continue;
    s.take = batching::BatchPolicy::take_chunk(pending, budget);
  }
  // Admission, oldest first; a request the pool cannot hold yet waits (FCFS, no overtaking).
  // A static batch is admitted whole, its prompts then prefilled under the budget.
  const bool may_admit = !options_.static_batching || running_.empty();
  while (may_admit && (budget > 0 || options_.static_batching) && !waiting_.empty() &&
         policy_.has_slot(running_.size())) {
    Seq& s = *waiting_.front();
    if (!admit(s)) break;
    s.take = batching::BatchPolicy::take_chunk(s.tokens.size() - s.computed, budget);
    running_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
  }

  std::vector<BatchRow> rows;
  for (const auto& sp : running_) {
    const Seq& s = *sp;
    for (std::size_t k = 0; k < s.take; ++k) {
      const std::size_t pos = s.computed + k;
      rows.push_back({s.tokens[pos], pos, s.kv->block_table(), pos + 1 == s.tokens.size()});
    }
  }
  if (rows.empty()) return events;
  const auto& logits = forward_.run(rows);
  ++stats_.steps;

  const std::size_t vocab = model_->config().vocab;
  std::size_t out = 0;
  for (std::size_t i = 0; i < running_.size();) {
    Seq& s = *running_[i];
    if (s.take == 0) {
      ++i;
      continue;
    }
    if (s.decoding)
      ++stats_.decode_rows;
    else
      stats_.prefill_tokens += s.take;
    s.computed += s.take;
    s.take = 0;
    if (s.computed < s.tokens.size()) {  // mid-prompt chunk: no logits yet
      ++i;
      continue;
    }
    const std::span<const float> row(logits.data() + out * vocab, vocab);
    ++out;
    const TokenId next = sample(row, s.params.temperature, s.params.top_p, s.rng);
    s.tokens.push_back(next);
    ++stats_.generated_tokens;
    const auto done = finished_after(next, s.emitted(), s.tokens.size(), s.params, model_->config().max_context);
    events.push_back({s.id, next, done, s.prompt_len, s.cached});
    if (done) {
      ++stats_.finished;
      release(s);
      running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  return events;
}

EngineStats Engine::stats() const {
  EngineStats s = stats_;
  s.running = running_.size();
  s.waiting = waiting_.size();
  s.kv_blocks_used = pool_.used_blocks();
  s.kv_blocks_free = pool_.free_blocks();
  if (cache_) {
    s.prefix_lookups = cache_->stats().lookups;
    s.prefix_hits = cache_->stats().hits;
  }
  s.matmul_flops = forward_.flops();
  return s;
}

}  // namespace serving
