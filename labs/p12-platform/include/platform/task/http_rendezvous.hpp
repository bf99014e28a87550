// Rendezvous through the control plane (the contract gpulabd implements):
//   POST {url}/v1/jobs/{job}/rendezvous   {"attempt":A,"rank":R,"world":W,"address":"...","port":P}
//        -> 200
//   GET  {url}/v1/jobs/{job}/rendezvous?attempt=A
//        -> {"attempt":A,"world":W,"endpoints":[{"rank":0,"address":"...","port":P},...]}
// polled every 20 ms until it lists W endpoints. Connection errors and 5xx are
// retried until the deadline (the control plane may be restarting); any other
// non-200 answer, a different world, or a newer attempt ends the wait at once.
#pragma once

#include <cstdint>
#include <string>

#include "platform/task/rendezvous.hpp"

namespace gpulab::platform::task {

// "http://host:port/prefix" split into what httplib::Client takes and the path prefix.
struct BaseUrl {
  std::string scheme_host_port;  // "http://127.0.0.1:8080"
  std::string path_prefix;       // "" or "/prefix" (no trailing slash)
};
// UsageError for anything but http://host[:port][/path].
BaseUrl parse_base_url(const std::string& url);

class HttpRendezvous final : public Rendezvous {
 public:
  HttpRendezvous(const std::string& url, std::string job, std::uint64_t attempt);

  std::vector<ring::Endpoint> exchange(int rank, int world, const ring::Endpoint& self,
                                       ring::Clock::time_point deadline) override;

 private:
  BaseUrl base_;
  std::string job_;
  std::uint64_t attempt_;
};

}  // namespace gpulab::platform::task
