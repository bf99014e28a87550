// When a generation ends, decided in one place for the engine and the
// reference decoder alike.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "serving/sampler.hpp"

namespace serving {

enum class FinishReason { kStop, kLength, kCancelled };
// The OpenAI names: "stop", "length"; "cancelled" for a request the client dropped.
std::string_view finish_reason_name(FinishReason r);

// After a token was emitted: kStop when it is a stop token, kLength when
// max_tokens were emitted or the sequence (prompt + output) filled the
// model's context; nullopt to go on.
std::optional<FinishReason> finished_after(TokenId token, std::size_t emitted, std::size_t sequence_length,
                                           const SamplingParams& params, std::size_t max_context);

}  // namespace serving
