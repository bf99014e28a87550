#include "serving/finish.hpp"

#include <algorithm>

namespace serving {

std::string_view finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kCancelled: return "cancelled";
  }
  return "?";
}

std::optional<FinishReason> finished_after(TokenId token, std::size_t emitted, std::size_t sequence_length,
                                           const SamplingParams& params, std::size_t max_context) {
  if (std::find(params.stop.begin(), params.stop.end(), token) != params.stop.end()) return FinishReason::kStop;
  if (emitted >= params.max_tokens || sequence_length >= max_context) return FinishReason::kLength;
  return std::nullopt;
}

}  // namespace serving
