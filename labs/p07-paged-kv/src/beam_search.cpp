#include "paged_kv/beam_search.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "gpulab/rng.hpp"
#include "paged_kv/sequence.hpp"

namespace paged_kv {

BeamRun run_beams(const BeamSpec& spec) {
  if (spec.width == 0 || spec.prompt == 0 || spec.block_size == 0)
    throw std::invalid_argument("width, prompt and block size must be at least 1");
  if (spec.width > 4096 || spec.prompt + spec.steps > 1'000'000)
    throw std::invalid_argument("at most 4096 beams and 1,000,000 tokens per beam");
  const std::size_t per_beam = blocks_for(spec.prompt + spec.steps, spec.block_size);
  // Enough for fully private beams plus the prompt: the pool never limits the demo.
  BlockAllocator pool(spec.width * (per_beam + 1) + blocks_for(spec.prompt, spec.block_size),
                      spec.block_size);
  gpulab::Rng rng(spec.seed);
  BeamRun run;

  struct Beam {
    Sequence seq;
    std::vector<Token> history;
    double score = 0;
  };
  std::vector<Beam> beams;
  {
    Sequence prompt(pool);
    std::vector<Token> tokens(spec.prompt);
    std::iota(tokens.begin(), tokens.end(), 0);
    prompt.append(tokens);
    for (std::size_t b = 0; b < spec.width; ++b) {
      beams.push_back({prompt.fork(), tokens, 0});
      ++run.forks;
    }
  }  // the prompt's own handle goes; the beams keep its blocks alive
  const std::size_t full_prompt_blocks = spec.prompt / spec.block_size;
  for (std::size_t k = 0; k < full_prompt_blocks; ++k)
    if (pool.refcount(beams[0].seq.block_table()[k]) == static_cast<int>(spec.width))
      ++run.shared_prompt_blocks;

  for (std::size_t step = 1; step <= spec.steps; ++step) {
    for (auto& beam : beams) {  // each beam samples a different next token
      const auto token = static_cast<Token>(rng.uniform_int(1'000'000, 2'000'000));
      beam.seq.append(token);
      beam.history.push_back(token);
      beam.score += rng.uniform01();
    }
    if (spec.fork_every && step % spec.fork_every == 0 && spec.width > 1 && step < spec.steps) {
      // Keep the better half and fork each survivor (the worse half's blocks are freed).
      std::stable_sort(beams.begin(), beams.end(),
                       [](const Beam& a, const Beam& b) { return a.score > b.score; });
      const std::size_t keep = (spec.width + 1) / 2;
      for (std::size_t b = keep; b < beams.size(); ++b) run.cow_copies += beams[b].seq.cow_copies();
      beams.erase(beams.begin() + static_cast<std::ptrdiff_t>(keep), beams.end());
      for (std::size_t b = 0; beams.size() < spec.width; ++b) {
        Beam child{beams[b].seq.fork(), beams[b].history, beams[b].score};
        beams.push_back(std::move(child));
        ++run.forks;
      }
    }
  }

  run.physical_blocks = pool.used_blocks();
  run.naive_blocks = spec.width * per_beam;
  run.contents_ok = std::all_of(beams.begin(), beams.end(),
                                [](const Beam& b) { return b.seq.tokens() == b.history; });
  long refs = 0, held = 0;
  for (std::size_t b = 0; b < pool.num_blocks(); ++b)
    refs += pool.refcount(static_cast<BlockId>(b));
  for (const auto& beam : beams) held += static_cast<long>(beam.seq.block_table().size());
  run.refcounts_ok = refs == held;
  for (const auto& beam : beams) run.cow_copies += beam.seq.cow_copies();
  beams.clear();
  run.all_freed = pool.free_blocks() == pool.num_blocks();
  return run;
}

}  // namespace paged_kv
