// Parallel sampling and beam search on shared blocks: beams fork from one
// prompt, so the prompt's full blocks are stored once; only a block that is
// partly filled when beams diverge is copied (on the first write into it).
// Every `fork_every` tokens the weaker half of the beams is dropped and the
// stronger half forked — beam search's prune-and-branch, with COW at each branch.
#pragma once

#include <cstddef>
#include <cstdint>

namespace paged_kv {

struct BeamSpec {
  std::size_t width = 4;
  std::size_t prompt = 100;
  std::size_t steps = 64;      // tokens each beam generates
  std::size_t fork_every = 0;  // 0: parallel sampling (fork once, never prune)
  std::size_t block_size = 16;
  std::uint64_t seed = 1;
};

struct BeamRun {
  std::size_t physical_blocks = 0;       // at the end, shared blocks counted once
  std::size_t naive_blocks = 0;          // the same beams each holding a private copy
  std::size_t cow_copies = 0;            // blocks copied because a shared block was written
  std::size_t forks = 0;                 // sequences created by fork()
  std::size_t shared_prompt_blocks = 0;  // full prompt blocks referenced by every beam
  bool contents_ok = false;              // every beam reads back exactly its own history
  bool refcounts_ok = false;             // sum of refcounts == references held by block tables
  bool all_freed = false;                // the pool is empty again after the beams finish
};

// Throws std::invalid_argument for a zero width, prompt or block size.
BeamRun run_beams(const BeamSpec& spec);

}  // namespace paged_kv
