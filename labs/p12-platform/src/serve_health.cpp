#include "platform/serve_health.hpp"

#include <fmt/format.h>

namespace platform {

ServeHealth::ServeHealth(ServeHealthPolicy policy, double started_s)
    : policy_(policy), started_s_(started_s) {}

bool ServeHealth::due(double now_s) const {
  return verdict_ != Verdict::kFailed &&
         (last_probe_s_ < 0 || now_s - last_probe_s_ >= policy_.interval_s);
}

ServeHealth::Verdict ServeHealth::observe(bool ok, std::string_view why, double now_s) {
  if (verdict_ == Verdict::kFailed) return verdict_;
  last_probe_s_ = now_s;
  if (ok) {
    failures_ = 0;
    verdict_ = Verdict::kHealthy;
    return verdict_;
  }
  if (verdict_ == Verdict::kStarting) {
    if (now_s - started_s_ >= policy_.start_timeout_s) {
      verdict_ = Verdict::kFailed;
      reason_ = fmt::format("the server did not answer GET /health within {:g} s of its start: {}",
                            policy_.start_timeout_s, why);
    }
    return verdict_;
  }
  if (++failures_ >= policy_.failures_to_fail) {
    verdict_ = Verdict::kFailed;
    reason_ = fmt::format(
        "the server stopped answering GET /health ({} probes in a row failed): {}", failures_, why);
  }
  return verdict_;
}

}  // namespace platform
