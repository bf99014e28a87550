#include "platform/task/gang.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpulab/errors.hpp"

namespace gpulab::platform::task {

ring::Transport join_gang(int rank, int world, const std::string& address, Rendezvous* rv,
                          std::chrono::milliseconds timeout) {
  if (world == 1) return ring::Transport(0, 1, std::vector<ring::Fd>(1), timeout);
  const auto deadline = ring::Clock::now() + timeout;
  ring::Listener listener;
  try {
    listener = ring::listen_tcp(address, world);
  } catch (const std::runtime_error& e) {
    throw RunError(fmt::format("rank {}: cannot listen on {}: {}", rank, address, e.what()));
  }
  const auto endpoints = rv->exchange(rank, world, {listener.address, listener.port}, deadline);
  try {
    return ring::connect_mesh(rank, endpoints, std::move(listener.fd), timeout, deadline);
  } catch (const std::runtime_error& e) {
    throw RunError(fmt::format("rank {}: cannot connect the gang's mesh: {}", rank, e.what()));
  }
}

std::string describe_peer_failure(int rank, const ring::PeerFailure& e) {
  if (e.suspects.empty())
    return fmt::format("rank {}: a peer stalled (alive but silent): {}", rank, e.what());
  return fmt::format("rank {}: peer rank {} died: {}", rank, fmt::join(e.suspects, ", rank "),
                     e.what());
}

}  // namespace gpulab::platform::task
