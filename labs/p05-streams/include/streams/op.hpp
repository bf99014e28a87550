// The vocabulary shared by both executors: ids, work items ("ops": a callable
// with a simulated duration), stream options, and the errors issue can raise.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>

namespace streams {

using StreamId = std::uint32_t;
using EventId = std::uint32_t;
using EngineId = std::uint32_t;

// A kernel or a copy. `fn` runs when the op starts; the op then occupies its
// stream (and engine slot) for `duration_ms`.
struct Op {
  const char* name = "op";
  double duration_ms = 0;
  std::function<void()> fn;
};

struct StreamOptions {
  // CUDA's convention: a lower number is a higher priority (-1 beats 0).
  // Priority decides who gets a shared engine slot first.
  int priority = 0;
  // Ops of this stream execute on a shared engine with limited slots (a copy
  // engine, the SMs). Without one, a stream's ops never wait for a slot.
  std::optional<EngineId> engine;
  // cudaStreamNonBlocking = false: a legacy default stream does not serialise with it.
  bool blocking = true;
};

// The legacy default stream (stream 0) synchronises with every blocking
// stream; per-thread default streams (nvcc --default-stream per-thread) make
// stream 0 an ordinary stream.
enum class DefaultStream : std::uint8_t { kLegacy, kPerThread };

// Issuing this wait or record would close a cycle in the wait-for graph.
struct DeadlockError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Something a captured graph cannot contain (a host sync, an external event...).
struct CaptureError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace streams
