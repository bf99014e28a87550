// Joining a gang: listen on an ephemeral port of `address`, rendezvous, and
// connect the full TCP mesh. Everything is bounded by one timeout, which then
// stays on the Transport as the collective watchdog: a dead peer makes the
// survivors' next all-reduce fail within it instead of hanging.
#pragma once

#include <chrono>
#include <string>

#include "platform/task/rendezvous.hpp"
#include "ring_allreduce/transport.hpp"

namespace gpulab::platform::task {

// world == 1 needs no rendezvous (`rv` may be null) and returns a Transport
// without peers. Failures are gpulab::RunError naming this rank.
ring::Transport join_gang(int rank, int world, const std::string& address, Rendezvous* rv,
                          std::chrono::milliseconds timeout);

// One line for a ring::PeerFailure: which rank died (or that a live peer stalled).
std::string describe_peer_failure(int rank, const ring::PeerFailure& e);

}  // namespace gpulab::platform::task
