// The oracle: for greedy decoding the engine's tokens equal the
// reference decoder's for every request, whatever the batch composition,
// block size, token budget, preemption or prefix sharing.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>

#include "gpulab/rng.hpp"
#include "serving/engine.hpp"
#include "serving/reference_decoder.hpp"
#include "test_support.hpp"

namespace {

using namespace serving;

struct Job {
  std::vector<TokenId> prompt;
  SamplingParams params;
};

// Runs every job through the engine (all submitted up front, or `per_step`
// at a time to vary the batch), returning each job's tokens and finish.
std::vector<Generation> run_engine(Engine& engine, const std::vector<Job>& jobs, std::size_t per_step) {
  std::map<RequestId, std::size_t> index;
  std::vector<Generation> out(jobs.size());
  std::vector<bool> done(jobs.size(), false);
  std::size_t next = 0, finished = 0;
  for (int guard = 0; finished < jobs.size(); ++guard) {
    if (guard > 100000) throw std::runtime_error("engine made no progress");
    for (std::size_t k = 0; k < per_step && next < jobs.size(); ++k, ++next) {
      auto id = engine.submit(jobs[next].prompt, jobs[next].params);
      if (!id) throw std::runtime_error(id.error().message);
      index[id.value()] = next;
    }
    for (const auto& e : engine.step()) {
      const std::size_t j = index.at(e.id);
      if (e.token) out[j].tokens.push_back(*e.token);
      if (e.finish) {
        out[j].finish = *e.finish;
        done[j] = true;
        ++finished;
      }
    }
  }
  return out;
}

std::vector<Job> seeded_jobs(std::uint64_t seed, std::size_t n, const std::vector<TokenId>& shared_prefix) {
  gpulab::Rng rng(seed);
  std::vector<Job> jobs(n);
  for (auto& j : jobs) {
    if (rng.bernoulli(0.5)) j.prompt = shared_prefix;
    const auto len = rng.uniform_int(1, 40);
    for (std::int64_t i = 0; i < len; ++i) j.prompt.push_back(static_cast<TokenId>(rng.uniform_int(0, 127)));
    j.params.max_tokens = static_cast<std::size_t>(rng.uniform_int(1, 24));
  }
  return jobs;
}

std::vector<Generation> reference(const std::vector<Job>& jobs) {
  ReferenceDecoder ref(serving_test::tiny_model());
  std::vector<Generation> out;
  for (const auto& j : jobs) out.push_back(ref.generate(j.prompt, j.params));
  return out;
}

void expect_same(const std::vector<Generation>& got, const std::vector<Generation>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].tokens, want[i].tokens) << what << ", request " << i;
    EXPECT_EQ(got[i].finish, want[i].finish) << what << ", request " << i;
  }
}

const std::vector<TokenId> kSystemPrompt = [] {
  std::vector<TokenId> p;
  for (int i = 0; i < 37; ++i) p.push_back(static_cast<TokenId>((i * 7 + 3) % 128));
  return p;
}();

TEST(EngineOracle, GreedyTokensEqualTheReferenceAcrossMixesBlockSizesAndBudgets) {
  struct Case {
    std::size_t block_size, budget, max_running, per_step;
    bool prefix;
  };
  const Case cases[] = {{16, 256, 32, 100, true}, {1, 7, 3, 2, true},   {4, 16, 8, 1, false},
                        {8, 64, 4, 3, true},      {32, 300, 16, 5, true}, {16, 1, 2, 100, false}};
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const auto jobs = seeded_jobs(seed, 12, kSystemPrompt);
    const auto want = reference(jobs);
    for (const Case& c : cases) {
      EngineOptions o;
      o.block_size = c.block_size;
      o.kv_blocks = (256 + c.block_size - 1) / c.block_size * 4;
      o.max_batched_tokens = c.budget;
      o.max_running = c.max_running;
      o.prefix_cache = c.prefix;
      Engine engine(serving_test::tiny_model(), o);
      expect_same(run_engine(engine, jobs, c.per_step), want,
                  fmt::format("seed {} block {} budget {} running {} prefix {}", seed, c.block_size, c.budget,
                              c.max_running, c.prefix));
      EXPECT_EQ(engine.stats().running + engine.stats().waiting, 0u);
      EXPECT_EQ(engine.stats().preemptions, 0u);
    }
  }
}

TEST(EngineOracle, PreemptionByRecomputeKeepsEveryTokenRight) {
  // A pool of exactly one context (256 tokens) for 12 requests that together want more.
  for (std::uint64_t seed = 4; seed <= 6; ++seed) {
    auto jobs = seeded_jobs(seed, 12, kSystemPrompt);
    for (auto& j : jobs) j.params.max_tokens = 40;
    const auto want = reference(jobs);
    for (const bool prefix : {true, false}) {
      EngineOptions o;
      o.block_size = 8;
      o.kv_blocks = 32;
      o.prefix_cache = prefix;
      Engine engine(serving_test::tiny_model(), o);
      expect_same(run_engine(engine, jobs, 100), want, fmt::format("seed {} prefix {}", seed, prefix));
      EXPECT_GT(engine.stats().preemptions, 0u) << "the pool was meant to run dry";
      EXPECT_EQ(engine.stats().kv_blocks_used, 0u) << "every block goes back when the work is done";
    }
  }
}

TEST(EngineOracle, PrefixCacheSkipsTheSharedPromptAndReportsIt) {
  std::vector<Job> jobs(2);
  jobs[0].prompt = kSystemPrompt;
  jobs[0].prompt.push_back(5);
  jobs[1].prompt = kSystemPrompt;
  jobs[1].prompt.push_back(9);
  for (auto& j : jobs) j.params.max_tokens = 6;
  const auto want = reference(jobs);
  EngineOptions o;
  o.block_size = 8;
  Engine engine(serving_test::tiny_model(), o);
  // One after the other: the second finds the first one's full blocks computed.
  auto first = run_engine(engine, {jobs[0]}, 1);
  const auto id = engine.submit(jobs[1].prompt, jobs[1].params);
  ASSERT_TRUE(id);
  std::vector<TokenId> second;
  std::size_t cached = 0;
  while (!engine.idle())
    for (const auto& e : engine.step()) {
      if (e.token) second.push_back(*e.token);
      cached = e.cached_tokens;
    }
  EXPECT_EQ(first[0].tokens, want[0].tokens);
  EXPECT_EQ(second, want[1].tokens);
  EXPECT_EQ(cached, 32u) << "37 shared tokens = 4 full blocks of 8";
  EXPECT_EQ(engine.stats().prefix_tokens_skipped, 32u);
  EXPECT_EQ(engine.stats().prefix_hits, 4u);
}

TEST(EngineOracle, FastBackendBatchesGiveTheSameTokensAsItsOwnReference) {
  const auto jobs = seeded_jobs(9, 10, kSystemPrompt);
  ReferenceDecoder ref(serving_test::tiny_model("fast"));
  std::vector<Generation> want;
  for (const auto& j : jobs) want.push_back(ref.generate(j.prompt, j.params));
  EngineOptions o;
  o.block_size = 4;
  o.kv_blocks = 80;
  Engine engine(serving_test::tiny_model("fast"), o);
  expect_same(run_engine(engine, jobs, 100), want, "fast backend");
}

// OpenCL (PoCL here) runs every op as a kernel: one work-item per output
// element or (row, head), so a row's floats do not depend on the batch either.
TEST(EngineOracle, OpenClBackendBatchesGiveTheSameTokensAsItsOwnReference) {
  if (serving_test::registry().find("opencl") == nullptr) GTEST_SKIP() << "opencl backend not loaded (no ICD)";
  const auto jobs = seeded_jobs(5, 6, kSystemPrompt);
  ReferenceDecoder ref(serving_test::tiny_model("opencl"));
  std::vector<Generation> want;
  for (const auto& j : jobs) want.push_back(ref.generate(j.prompt, j.params));
  EngineOptions o;
  o.block_size = 4;
  o.kv_blocks = 80;
  Engine engine(serving_test::tiny_model("opencl"), o);
  expect_same(run_engine(engine, jobs, 100), want, "opencl backend");
}

TEST(EngineOracle, StaticBatchingGivesTheSameTokensButAdmitsOnlyIntoAnEmptyBatch) {
  const auto jobs = seeded_jobs(12, 9, kSystemPrompt);
  const auto want = reference(jobs);
  EngineOptions o;
  o.static_batching = true;
  o.max_running = 4;
  o.max_batched_tokens = 16;
  Engine engine(serving_test::tiny_model(), o);
  expect_same(run_engine(engine, jobs, 100), want, "static batching");

  // Request 2 waits for both of the first batch to finish, though a slot frees earlier.
  Engine two(serving_test::tiny_model(), [] {
    EngineOptions t;
    t.static_batching = true;
    t.max_running = 2;
    return t;
  }());
  SamplingParams shorter, longer;
  shorter.max_tokens = 2;
  longer.max_tokens = 10;
  const RequestId a = two.submit({1, 2}, shorter).value(), b = two.submit({3, 4}, longer).value();
  const RequestId c = two.submit({5, 6}, shorter).value();
  std::vector<RequestId> order;
  while (!two.idle())
    for (const auto& e : two.step())
      if (e.finish) order.push_back(e.id);
  EXPECT_EQ(order, (std::vector<RequestId>{a, b, c}));
  // Continuous batching lets c into a's slot and finish before b.
  Engine cont(serving_test::tiny_model(), [] {
    EngineOptions t;
    t.max_running = 2;
    return t;
  }());
  const RequestId ca = cont.submit({1, 2}, shorter).value(), cb = cont.submit({3, 4}, longer).value();
  const RequestId cc = cont.submit({5, 6}, shorter).value();
  std::vector<RequestId> finished;
  while (!cont.idle())
    for (const auto& e : cont.step())
      if (e.finish) finished.push_back(e.id);
  EXPECT_EQ(finished, (std::vector<RequestId>{ca, cc, cb}));
}

TEST(Engine, SampledRequestsDependOnTheirSeedNotTheirNeighbours) {
  SamplingParams p;
  p.max_tokens = 20;
  p.temperature = 0.8;
  p.top_p = 0.95;
  p.seed = 42;
  const std::vector<TokenId> prompt = {1, 2, 3, 4, 5};
  ReferenceDecoder ref(serving_test::tiny_model());
  const auto want = ref.generate(prompt, p);
  auto jobs = seeded_jobs(11, 6, kSystemPrompt);
  jobs.push_back({prompt, p});
  Engine engine(serving_test::tiny_model(), EngineOptions{});
  const auto got = run_engine(engine, jobs, 100);
  EXPECT_EQ(got.back().tokens, want.tokens);
}

TEST(Engine, CancelEndsARequestAndFreesItsBlocks) {
  Engine engine(serving_test::tiny_model(), EngineOptions{});
  SamplingParams p;
  p.max_tokens = 200;
  const auto id = engine.submit({1, 2, 3}, p);
  ASSERT_TRUE(id);
  (void)engine.step();
  (void)engine.step();
  EXPECT_GT(engine.stats().kv_blocks_used, 0u);
  engine.cancel(id.value());
  const auto events = engine.step();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].finish, FinishReason::kCancelled);
  EXPECT_TRUE(engine.idle());
  EXPECT_EQ(engine.stats().kv_blocks_used, 0u);
}

TEST(Engine, RefusalsNameTheFieldAndTheQueueIsBounded) {
  EngineOptions o;
  o.max_waiting = 2;
  Engine engine(serving_test::tiny_model(), o);
  Refusal why;
  EXPECT_FALSE(engine.submit({}, SamplingParams{}, &why));
  EXPECT_EQ(why.field, "prompt");
  EXPECT_FALSE(engine.submit(std::vector<TokenId>(256, 1), SamplingParams{}, &why));
  EXPECT_EQ(why.message, "prompt: 256 tokens; the model's context is 256, so at most 255");
  EXPECT_FALSE(engine.submit({1, 500}, SamplingParams{}, &why));
  EXPECT_EQ(why.message, "prompt: token 500 at index 1 is outside the vocab of 128");
  SamplingParams zero;
  zero.max_tokens = 0;
  EXPECT_FALSE(engine.submit({1}, zero, &why));
  EXPECT_EQ(why.field, "max_tokens");
  EXPECT_TRUE(engine.submit({1}, SamplingParams{}));
  EXPECT_TRUE(engine.submit({1}, SamplingParams{}));
  EXPECT_FALSE(engine.submit({1}, SamplingParams{}, &why));
  EXPECT_EQ(why.kind, SubmitError::kQueueFull);
}

TEST(Engine, APoolSmallerThanOneContextIsRefused) {
  EngineOptions o;
  o.block_size = 16;
  o.kv_blocks = 15;  // 240 < 256
  EXPECT_THROW(Engine(serving_test::tiny_model(), o), std::invalid_argument);
}

}  // namespace
