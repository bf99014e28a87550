#include "platform/task/rendezvous.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpulab/errors.hpp"

namespace gpulab::platform::task {

std::vector<ring::Endpoint> order_by_rank(const std::vector<RankEndpoint>& records, int world,
                                          const std::string& origin) {
  std::vector<ring::Endpoint> out(static_cast<std::size_t>(world));
  std::vector<bool> seen(static_cast<std::size_t>(world), false);
  for (const RankEndpoint& r : records) {
    if (r.rank < 0 || r.rank >= world)
      throw RunError(fmt::format("{}: rank {} is outside world {}", origin, r.rank, world));
    const auto i = static_cast<std::size_t>(r.rank);
    if (seen[i]) throw RunError(fmt::format("{}: rank {} appears twice", origin, r.rank));
    if (r.endpoint.address.empty() || r.endpoint.port == 0)
      throw RunError(fmt::format("{}: rank {} has no usable address ('{}' port {})", origin, r.rank,
                                 r.endpoint.address, r.endpoint.port));
    seen[i] = true;
    out[i] = r.endpoint;
  }
  if (records.size() != static_cast<std::size_t>(world))
    throw RunError(fmt::format("{}: {} of {} ranks (missing rank {})", origin, records.size(),
                               world, missing_ranks(records, world)));
  return out;
}

std::string missing_ranks(const std::vector<RankEndpoint>& records, int world) {
  std::vector<int> missing;
  for (int r = 0; r < world; ++r) {
    bool found = false;
    for (const auto& rec : records) found = found || rec.rank == r;
    if (!found) missing.push_back(r);
  }
  return fmt::format("{}", fmt::join(missing, ", "));
}

}  // namespace gpulab::platform::task
