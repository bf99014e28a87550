// A client of the control plane's API, for gpulabctl, the demo and tests.
// Failures become the exit codes gpulabctl documents: the control plane not
// reachable → RunError (exit 1, one line naming the URL); HTTP 400/404/409 →
// UsageError (exit 2, the server's message naming the field); 403 → RunError.
#pragma once

#include <httplib.h>

#include <chrono>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include "gpulab/json.hpp"

namespace platform {

class ApiClient {
 public:
  // "http://127.0.0.1:7070"; throws gpulab::UsageError for another scheme.
  explicit ApiClient(std::string url);

  gpulab::Json get(const std::string& path) const;
  std::string get_text(const std::string& path) const;
  // `body` is sent as is (JSON or YAML job specs); `status` receives the HTTP status.
  gpulab::Json post(const std::string& path, const std::string& body, const std::string& idempotency_key = "",
                    int* status = nullptr) const;
  [[nodiscard]] const std::string& url() const { return url_; }

 private:
  std::string url_;
  std::unique_ptr<httplib::Client> client_;
};

// GPULAB_CONTROL, else http://127.0.0.1:7070.
std::string default_control_url();

// Polls the job until its state is one of `states` or `timeout` passes;
// returns the job as last seen (the demo and the tests check its state).
gpulab::Json wait_for_job(const ApiClient& api, const std::string& id,
                          std::initializer_list<std::string_view> states, std::chrono::milliseconds timeout);
// The node's state ("ready", "draining", "lost"), or "?" for an unknown node.
std::string node_state(const ApiClient& api, const std::string& name);

}  // namespace platform
