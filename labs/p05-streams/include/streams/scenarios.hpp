// The curriculum's four scenarios, written once against Executor so they run
// on the wall clock (ThreadExecutor, the learner's demo) or in virtual time
// (VirtualExecutor, exact and deterministic).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "streams/executor.hpp"

namespace streams {

enum class Clock : std::uint8_t { kWall, kVirtual };
std::unique_ptr<Executor> make_executor(Clock clock, DefaultStream mode);

// Scenario 1: copy/compute overlap. `chunks` x (H2D, kernel, D2H).
struct PipelineShape {
  int chunks = 8;
  double h2d_ms = 10;
  double kernel_ms = 15;
  double d2h_ms = 10;
  int buffers = 3;  // chunk c's H2D waits for chunk c-buffers' D2H (buffer reuse)
};
// Everything on one stream.
double time_serial(Executor& ex, const PipelineShape& shape);
// Copy-in, compute and copy-out streams wired with events.
double time_pipelined(Executor& ex, const PipelineShape& shape);

struct PipelineResult {
  double serial_ms = 0;
  double pipelined_ms = 0;
  double speedup = 0;
  bool pass = false;  // speedup >= 1.7
};
PipelineResult scenario_pipeline(Clock clock, const PipelineShape& shape = {});

// Scenario 2: two independent chains of `ops` x `op_ms`, issued to the legacy
// default stream vs to two explicit streams.
struct DefaultStreamResult {
  double one_stream_ms = 0;
  double two_stream_ms = 0;
  double overlap = 0;
  bool pass = false;  // overlap >= 1.5
};
DefaultStreamResult scenario_default_stream(Clock clock, int ops = 4, double op_ms = 10);

// Scenario 3: a kernel still reading a buffer when it is freed and handed to
// another stream. Host-ordered free corrupts (forced by a deterministic
// interleaving hook on the wall clock, by construction in virtual time);
// stream-ordered free cannot.
struct LifetimeResult {
  int host_trials = 0;
  int host_corrupted = 0;
  int trials = 0;
  int stream_corrupted = 0;
  int reused = 0;               // trials in which the second stream really got the same block
  std::uint64_t edges = 0;      // event edges the stream-ordered allocator inserted
  bool hook_timed_out = false;  // the hook gave up waiting (never expected)
  bool host_detected = false;
  bool pass = false;
};
LifetimeResult scenario_lifetime(Clock clock, int trials, std::uint64_t seed);

// Scenario 4: an acyclic event graph runs A -> B -> C; a circular wait is
// rejected when the record that would close it is issued.
struct DeadlockResult {
  bool acyclic_accepted = false;
  bool acyclic_order_ok = false;
  bool cycle_detected = false;
  std::string cycle_message;
  bool pass = false;
};
DeadlockResult scenario_deadlock(Clock clock);

}  // namespace streams
