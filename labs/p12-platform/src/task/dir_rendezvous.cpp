#include "platform/task/dir_rendezvous.hpp"

#include <fmt/format.h>

#include <system_error>
#include <thread>

#include "gpulab/errors.hpp"
#include "gpulab/file.hpp"
#include "gpulab/text.hpp"
#include "platform/task/atomic_file.hpp"

namespace gpulab::platform::task {

namespace fs = std::filesystem;

void DirRendezvous::publish(int rank, const ring::Endpoint& self) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec)
    throw RunError(
        fmt::format("rendezvous dir '{}': cannot create: {}", dir_.string(), ec.message()));
  try {
    write_file_atomic(dir_ / fmt::format("rank-{}", rank),
                      fmt::format("{} {}\n", self.address, self.port));
  } catch (const std::runtime_error& e) {
    throw RunError(fmt::format("rendezvous: {}", e.what()));
  }
}

std::optional<RankEndpoint> DirRendezvous::read_record(int rank) const {
  const fs::path file = dir_ / fmt::format("rank-{}", rank);
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::nullopt;
  auto text = read_text_file(file.string(), 4096);
  if (!text) throw RunError(fmt::format("rendezvous: {}", text.error().message));
  const auto fields = split_fields(trim(text.value()), ' ');
  unsigned port = 0;
  if (fields.size() != 2 || fields[0].empty() || !parse_number(fields[1], port) || port == 0 ||
      port > 65535)
    throw RunError(
        fmt::format("rendezvous record '{}' is malformed: want \"address port\", got "
                    "\"{}\"",
                    file.string(), trim(text.value())));
  return RankEndpoint{rank, {std::string(fields[0]), static_cast<std::uint16_t>(port)}};
}

std::vector<ring::Endpoint> DirRendezvous::exchange(int rank, int world, const ring::Endpoint& self,
                                                    ring::Clock::time_point deadline) {
  publish(rank, self);
  for (;;) {
    std::vector<RankEndpoint> found;
    for (int r = 0; r < world; ++r)
      if (auto rec = read_record(r)) found.push_back(*rec);
    if (static_cast<int>(found.size()) == world)
      return order_by_rank(found, world, "rendezvous dir " + dir_.string());
    if (ring::Clock::now() >= deadline)
      throw RunError(
          fmt::format("rendezvous timed out in '{}': missing rank {} ({} of {} ranks "
                      "published)",
                      dir_.string(), missing_ranks(found, world), found.size(), world));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace gpulab::platform::task
