// A tiny stand-in for the control plane's rendezvous endpoint (the contract in
// platform/task/http_rendezvous.hpp), for gpulab-task's tests: it keeps the
// endpoints published per (job, attempt) and answers the poll with them.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gpulab/json.hpp"

namespace task_test {

class RendezvousServer {
 public:
  RendezvousServer() {
    server_.Post(R"(/v1/jobs/([^/]+)/rendezvous)", [this](const httplib::Request& req,
                                                          httplib::Response& res) {
      const auto body = gpulab::Json::parse(req.body, nullptr, false);
      if (body.is_discarded() || !body.contains("attempt") || !body.contains("rank") ||
          !body.contains("world") || !body.contains("address") || !body.contains("port")) {
        res.status = 400;
        res.set_content(R"({"error":"bad rendezvous body"})", "application/json");
        return;
      }
      const std::lock_guard lock(mu_);
      ++posts_;
      auto& slot = jobs_[{req.matches[1].str(), body["attempt"].get<std::uint64_t>()}];
      slot.world = body["world"].get<int>();
      gpulab::Json e = {
          {"rank", body["rank"]}, {"address", body["address"]}, {"port", body["port"]}};
      slot.endpoints.erase(body["rank"].get<int>());
      slot.endpoints.emplace(body["rank"].get<int>(), std::move(e));
      res.set_content("{}", "application/json");
    });
    server_.Get(R"(/v1/jobs/([^/]+)/rendezvous)",
                [this](const httplib::Request& req, httplib::Response& res) {
                  if (fail_gets_with_ != 0) {
                    res.status = fail_gets_with_;
                    res.set_content(R"({"error":"injected"})", "application/json");
                    return;
                  }
                  const std::uint64_t attempt = std::stoull(req.get_param_value("attempt"));
                  const std::lock_guard lock(mu_);
                  const auto it = jobs_.find({req.matches[1].str(), attempt});
                  gpulab::Json doc = {{"attempt", attempt + report_newer_attempt_},
                                      {"world", 0},
                                      {"endpoints", gpulab::Json::array()}};
                  if (it != jobs_.end()) {
                    doc["world"] = it->second.world;
                    for (const auto& [rank, e] : it->second.endpoints)
                      doc["endpoints"].push_back(e);
                  }
                  res.set_content(doc.dump(), "application/json");
                });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  RendezvousServer(const RendezvousServer&) = delete;
  RendezvousServer& operator=(const RendezvousServer&) = delete;
  ~RendezvousServer() {
    server_.stop();
    thread_.join();
  }

  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  [[nodiscard]] int posts() const {
    const std::lock_guard lock(mu_);
    return posts_;
  }
  // Fault injection: every GET answers this status (0 = normal).
  void fail_gets_with(int status) { fail_gets_with_ = status; }
  // Fault injection: GET reports attempt + n, as if a newer attempt had started.
  void report_newer_attempt(std::uint64_t n) { report_newer_attempt_ = n; }

 private:
  struct Slot {
    int world = 0;
    std::map<int, gpulab::Json> endpoints;
  };
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::uint64_t>, Slot> jobs_;
  int posts_ = 0;
  std::atomic<int> fail_gets_with_{0};
  std::atomic<std::uint64_t> report_newer_attempt_{0};
};

}  // namespace task_test
