#include "platform/slurm_status.hpp"

#include <array>
#include <cctype>
#include <charconv>

#include "gpulab/text.hpp"

namespace platform {
namespace {

// Key=value tokens of one line; a token without '=' (or one whose key is not
// a Slurm key) continues the previous value, which holds blanks.
std::map<std::string, std::string> key_values(std::string_view line) {
  std::map<std::string, std::string> kv;
  std::string* last = nullptr;
  for (const auto tok : gpulab::split_fields(line, ' ')) {
    if (tok.empty()) continue;
    const auto eq = tok.find('=');
    const auto key = tok.substr(0, eq == std::string_view::npos ? 0 : eq);
    const bool is_key = !key.empty() && std::isupper(static_cast<unsigned char>(key.front())) &&
                        key.find_first_of("()") == std::string_view::npos;
    if (eq != std::string_view::npos && is_key) {
      last = &kv[std::string(key)];
      *last = std::string(tok.substr(eq + 1));
    } else if (last != nullptr) {
      *last += " ";
      *last += tok;
    }
  }
  return kv;
}

int to_int(std::string_view s) {
  int v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

}  // namespace

std::map<std::string, SlurmJobStatus> parse_scontrol_jobs(std::string_view text) {
  std::map<std::string, SlurmJobStatus> out;
  for (const auto line : gpulab::split_fields(text, '\n')) {
    auto kv = key_values(line);
    const auto id = kv.find("JobId");
    if (id == kv.end() || id->second.empty()) continue;
    SlurmJobStatus s;
    s.id = id->second;
    s.name = kv["JobName"];
    s.state = kv["JobState"];
    s.reason = kv["Reason"];
    s.nodes = kv["NodeList"];
    const std::string& ec = kv["ExitCode"];
    const auto colon = ec.find(':');
    s.exit_code = to_int(std::string_view(ec).substr(0, colon));
    if (colon != std::string::npos) s.signal = to_int(std::string_view(ec).substr(colon + 1));
    out[s.id] = std::move(s);
  }
  return out;
}

std::optional<JobState> mirror_state(std::string_view st) {
  struct Row {
    std::string_view slurm;
    JobState gpulab;
  };
  static constexpr std::array kTable{
      Row{"PENDING", JobState::kPending},      Row{"CONFIGURING", JobState::kPending},
      Row{"REQUEUED", JobState::kPending},     Row{"REQUEUE_HOLD", JobState::kPending},
      Row{"REQUEUE_FED", JobState::kPending},  Row{"RESV_DEL_HOLD", JobState::kPending},
      Row{"RUNNING", JobState::kRunning},      Row{"COMPLETING", JobState::kRunning},
      Row{"SUSPENDED", JobState::kRunning},    Row{"STAGE_OUT", JobState::kRunning},
      Row{"SIGNALING", JobState::kRunning},    Row{"RESIZING", JobState::kRunning},
      Row{"STOPPED", JobState::kRunning},      Row{"COMPLETED", JobState::kSucceeded},
      Row{"CANCELLED", JobState::kCancelled},  Row{"FAILED", JobState::kFailed},
      Row{"TIMEOUT", JobState::kFailed},       Row{"NODE_FAIL", JobState::kFailed},
      Row{"OUT_OF_MEMORY", JobState::kFailed}, Row{"BOOT_FAIL", JobState::kFailed},
      Row{"DEADLINE", JobState::kFailed},      Row{"PREEMPTED", JobState::kFailed},
      Row{"REVOKED", JobState::kFailed},       Row{"SPECIAL_EXIT", JobState::kFailed},
  };
  for (const auto& r : kTable) {
    if (r.slurm == st) return r.gpulab;
  }
  return std::nullopt;
}

}  // namespace platform
