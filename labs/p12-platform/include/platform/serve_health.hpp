// How an agent judges a serve task (a gpulab-serve it started) from its
// GET /health probes. A service never exits on success, so its exit code
// cannot say it works: it is "starting" until the first probe answers 200
// (its endpoint is reported then, not before), "healthy" while probes keep
// answering, and "failed" when it never answered within the start timeout or
// missed `failures_to_fail` probes in a row after it had answered. A failed
// server is stopped and reported failed, so the platform's restart rules
// apply as for a crashed rank. Pure logic on a clock the caller passes in.
#pragma once

#include <string>
#include <string_view>

namespace platform {

struct ServeHealthPolicy {
  double start_timeout_s =
      300;                  // model weights are drawn and uploaded first: generous on a loaded node
  double interval_s = 0.5;  // between probes
  int failures_to_fail = 3;  // consecutive failed probes of a server that had answered
};

class ServeHealth {
 public:
  enum class Verdict { kStarting, kHealthy, kFailed };

  ServeHealth(ServeHealthPolicy policy, double started_s);

  // Whether a probe is due at `now_s`.
  [[nodiscard]] bool due(double now_s) const;
  // One probe's outcome (`why` says what went wrong when !ok); returns the verdict.
  Verdict observe(bool ok, std::string_view why, double now_s);
  [[nodiscard]] Verdict verdict() const { return verdict_; }
  // Why it failed, in words, once verdict() is kFailed.
  [[nodiscard]] const std::string& reason() const { return reason_; }

 private:
  ServeHealthPolicy policy_;
  double started_s_;
  double last_probe_s_ = -1;
  int failures_ = 0;
  Verdict verdict_ = Verdict::kStarting;
  std::string reason_;
};

}  // namespace platform
