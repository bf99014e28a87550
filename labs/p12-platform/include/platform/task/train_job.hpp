// `gpulab-task train`: one rank of a data-parallel gang training the MLP of
// mlp.hpp on seeded synthetic data (synthetic_data.hpp).
//
// Per step every rank computes forward and backward on its shard of the
// global batch through the HAL backend; then two ring all-reduces over a TCP
// mesh (ring::connect_mesh): one of binary64 statistics — the loss sum, the
// correct count, and each rank's weights checksum and step in its own slot, so
// every rank checks every step that all weights are still identical — and one
// of the FP32 gradients. Every rank then applies the same SGD update.
//
// Determinism: samples depend only on (seed, global index), the ring reduces
// each element in a fixed order, and host code has no threads, so the same
// seed, world and backend give the same loss sequence bit for bit. Rank 0
// checkpoints every K steps; every rank resumes from `latest` at start-up.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "gpulab/json.hpp"

namespace gpulab::platform::task {

struct TrainOptions {
  std::string backend = "cpu_ref";
  int rank = 0;
  int world = 1;
  std::uint64_t steps = 100;
  std::uint64_t seed = 1;
  std::string checkpoint_dir;          // empty: no checkpoints, no resume
  std::uint64_t checkpoint_every = 0;  // 0: never write (still resumes from the dir)
  std::uint64_t batch = 64;            // global batch, split evenly over the ranks
  std::uint64_t hidden = 64;
  float lr = 0.1f;
  // Exactly one way to rendezvous when world > 1.
  std::string rendezvous_url;
  std::string job;
  std::uint64_t attempt = 0;
  std::string rendezvous_dir;
  std::string address = "127.0.0.1";
  std::uint64_t timeout_ms = 10'000;  // rendezvous, connect, and the collective watchdog
  // Fault injection for the platform's tests: this rank SIGKILLs itself when
  // step `crash_at_step` starts (0 = never).
  std::uint64_t crash_at_step = 0;
};

// UsageError naming the flag.
void validate(const TrainOptions& o);

struct TrainSummary {
  int rank = 0;
  int world = 1;
  std::string backend;
  std::uint64_t steps = 0;         // the run's total (--steps)
  std::uint64_t resumed_from = 0;  // the checkpoint's step, 0 for a fresh run
  double first_loss = 0;           // step 1's loss, carried through checkpoints
  double final_loss = 0;           // the last step's loss
  double final_accuracy = 0;
  std::string weights_checksum;       // FNV-1a of the final weights, equal on every rank
  std::uint64_t allreduce_bytes = 0;  // payload bytes this rank sent in all-reduces
  double seconds = 0;                 // the training loop, after the gang connected
};

// How often each rank reports its pace ({"event":"pace"}: steps, seconds,
// model_flops since its last one), from which the agent computes MFU.
inline constexpr double kPaceSeconds = 1.0;

struct TrainEvents {
  // Step and checkpoint events (rank 0 only), pace events (every rank).
  std::function<void(const gpulab::Json&)> emit;
};

TrainSummary run_train(const TrainOptions& o, const TrainEvents& events);

gpulab::Json done_event(const TrainSummary& s);

}  // namespace gpulab::platform::task
