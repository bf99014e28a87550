// How the ranks of a gang find each other. Every rank listens on an ephemeral
// port first, then publishes {rank, address, port} and waits until all `world`
// ranks have; the result, ordered by rank, is what ring::connect_mesh takes.
// Two implementations: a shared directory (dir_rendezvous.hpp) and the control
// plane's HTTP endpoint (http_rendezvous.hpp).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "ring_allreduce/socket.hpp"
#include "ring_allreduce/transport.hpp"

namespace gpulab::platform::task {

struct RankEndpoint {
  int rank = 0;
  ring::Endpoint endpoint;
};

class Rendezvous {
 public:
  Rendezvous() = default;
  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;
  virtual ~Rendezvous() = default;

  // Publishes `self` as `rank` of `world` and returns every rank's endpoint,
  // index = rank. Throws gpulab::RunError when `deadline` passes first, naming
  // the ranks still missing.
  virtual std::vector<ring::Endpoint> exchange(int rank, int world, const ring::Endpoint& self,
                                               ring::Clock::time_point deadline) = 0;
};

// Checks a full set of records (each rank in [0, world) exactly once, a
// non-empty address, a non-zero port) and orders it by rank. Throws
// gpulab::RunError saying what is wrong; `origin` names the source.
std::vector<ring::Endpoint> order_by_rank(const std::vector<RankEndpoint>& records, int world,
                                          const std::string& origin);

// "1, 3" for the ranks in [0, world) that `records` lacks.
std::string missing_ranks(const std::vector<RankEndpoint>& records, int world);

}  // namespace gpulab::platform::task
