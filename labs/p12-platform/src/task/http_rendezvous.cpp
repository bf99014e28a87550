#include "platform/task/http_rendezvous.hpp"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <thread>

#include "gpulab/errors.hpp"
#include "gpulab/json.hpp"

namespace gpulab::platform::task {

namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(20);

bool retryable(const httplib::Result& res) {
  return !res || res->status >= 500;
}

std::string describe(const httplib::Result& res) {
  if (!res) return httplib::to_string(res.error());
  std::string body = res->body.substr(0, 200);
  std::replace(body.begin(), body.end(), '\n', ' ');
  return fmt::format("HTTP {} {}", res->status, body);
}

// Bounds one request by what is left of the deadline (at least 1 ms).
void bound(httplib::Client& c, ring::Clock::time_point deadline) {
  const auto left = std::max<std::int64_t>(
      1,
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - ring::Clock::now()).count());
  c.set_connection_timeout(std::chrono::milliseconds(left));
  c.set_read_timeout(std::chrono::milliseconds(left));
  c.set_write_timeout(std::chrono::milliseconds(left));
}

}  // namespace

BaseUrl parse_base_url(const std::string& url) {
  const std::string scheme = "http://";
  if (!url.starts_with(scheme))
    throw UsageError(fmt::format("--rendezvous wants http://host:port[/path]; got '{}'", url));
  const std::string rest = url.substr(scheme.size());
  const auto slash = rest.find('/');
  BaseUrl b;
  b.scheme_host_port = scheme + rest.substr(0, slash);
  if (slash != std::string::npos) b.path_prefix = rest.substr(slash);
  while (b.path_prefix.ends_with('/')) b.path_prefix.pop_back();
  if (rest.substr(0, slash).empty())
    throw UsageError(fmt::format("--rendezvous '{}' has no host", url));
  return b;
}

HttpRendezvous::HttpRendezvous(const std::string& url, std::string job, std::uint64_t attempt)
    : base_(parse_base_url(url)), job_(std::move(job)), attempt_(attempt) {
  if (job_.empty() || job_.find_first_of("/?#% ") != std::string::npos)
    throw UsageError(fmt::format("--job '{}' is not a usable job id", job_));
}

std::vector<ring::Endpoint> HttpRendezvous::exchange(int rank, int world,
                                                     const ring::Endpoint& self,
                                                     ring::Clock::time_point deadline) {
  const std::string path = fmt::format("{}/v1/jobs/{}/rendezvous", base_.path_prefix, job_);
  const std::string where = fmt::format("rendezvous {}{}", base_.scheme_host_port, path);
  httplib::Client client(base_.scheme_host_port);
  client.set_tcp_nodelay(true);  // a poll every 20 ms must not wait 40 ms for an ACK

  const gpulab::Json body = {{"attempt", attempt_},
                             {"rank", rank},
                             {"world", world},
                             {"address", self.address},
                             {"port", self.port}};
  for (;;) {
    bound(client, deadline);
    const auto res = client.Post(path, body.dump(), "application/json");
    if (res && res->status == 200) break;
    if (!retryable(res))
      throw RunError(
          fmt::format("{}: publishing rank {} was refused: {}", where, rank, describe(res)));
    if (ring::Clock::now() >= deadline)
      throw RunError(fmt::format("{}: cannot publish rank {} before the timeout: {}", where, rank,
                                 describe(res)));
    std::this_thread::sleep_for(kPollInterval);
  }

  const std::string query = fmt::format("{}?attempt={}", path, attempt_);
  std::vector<RankEndpoint> records;
  // What the last good answer said stays the headline: a poll cut short by the deadline itself
  // must not replace "missing rank 2" with a bare transport error.
  std::string membership;
  std::string last_problem = "no answer yet";
  for (;;) {
    bound(client, deadline);
    const auto res = client.Get(query);
    if (res && res->status == 200) {
      const auto doc = gpulab::Json::parse(res->body, nullptr, false);
      if (doc.is_discarded() || !doc.is_object() || !doc.contains("endpoints") ||
          !doc["endpoints"].is_array())
        throw RunError(
            fmt::format("{}: the answer is not the rendezvous document: {}", where, describe(res)));
      if (doc.value("attempt", attempt_) > attempt_)
        throw RunError(fmt::format("{}: attempt {} was superseded by attempt {}", where, attempt_,
                                   doc.value("attempt", attempt_)));
      if (doc.contains("world") && doc["world"] != world)
        throw RunError(
            fmt::format("{}: the control plane says world {}, this rank was started "
                        "with world {}",
                        where, doc["world"].dump(), world));
      records.clear();
      try {
        for (const auto& e : doc["endpoints"]) {
          const auto port = e.at("port").get<std::int64_t>();
          if (port < 1 || port > 65535)
            throw RunError(
                fmt::format("{}: rank {} has port {}", where, e.at("rank").dump(), port));
          records.push_back(
              {e.at("rank").get<int>(),
               {e.at("address").get<std::string>(), static_cast<std::uint16_t>(port)}});
        }
      } catch (const gpulab::Json::exception& ex) {
        throw RunError(fmt::format("{}: malformed endpoint: {}", where, ex.what()));
      }
      if (static_cast<int>(records.size()) >= world) return order_by_rank(records, world, where);
      membership = fmt::format("{} of {} ranks published, missing rank {}", records.size(), world,
                               missing_ranks(records, world));
      last_problem.clear();
    } else if (!retryable(res)) {
      throw RunError(fmt::format("{}: {}", where, describe(res)));
    } else {
      last_problem = describe(res);
    }
    if (ring::Clock::now() >= deadline) {
      std::string why = membership.empty() ? last_problem : membership;
      if (!membership.empty() && !last_problem.empty())
        why += fmt::format(" (last poll: {})", last_problem);
      throw RunError(fmt::format("{}: timed out: {}", where, why));
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

}  // namespace gpulab::platform::task
