// Rendezvous through a directory every rank can see: rank R publishes
// DIR/rank-<R> ("address port\n", written atomically) and polls every 20 ms
// until all `world` files exist. Meant for tests and standalone runs; use a
// fresh directory per launch of a gang, or a relaunched rank may read a dead
// predecessor's record.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "platform/task/rendezvous.hpp"

namespace gpulab::platform::task {

class DirRendezvous final : public Rendezvous {
 public:
  explicit DirRendezvous(std::filesystem::path dir) : dir_(std::move(dir)) {}

  std::vector<ring::Endpoint> exchange(int rank, int world, const ring::Endpoint& self,
                                       ring::Clock::time_point deadline) override;

  // The record of `rank` if its file exists; RunError when it is malformed.
  [[nodiscard]] std::optional<RankEndpoint> read_record(int rank) const;
  void publish(int rank, const ring::Endpoint& self) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace gpulab::platform::task
