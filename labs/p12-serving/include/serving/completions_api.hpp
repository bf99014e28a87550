// The OpenAI completions API shape, without the HTTP: parsing a request body
// into a prompt and sampling parameters (every bad field named, OpenAI-style
// error bodies), and building the response, stream chunks and model list.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/json.hpp"
#include "serving/finish.hpp"
#include "serving/model_config.hpp"
#include "serving/sampler.hpp"

namespace serving {

// An HTTP status and a message that names the field ("max_tokens: must be ...").
struct ApiError : std::runtime_error {
  ApiError(int http_status, std::string field_name, const std::string& message)
      : std::runtime_error(message), status(http_status), field(std::move(field_name)) {}
  int status;
  std::string field;
};

struct CompletionRequest {
  std::vector<TokenId> prompt;
  SamplingParams params;
  bool stream = false;
};

// Defaults follow OpenAI: max_tokens 16, temperature 1, top_p 1; seed 0.
// Accepted fields: model, prompt (text or token ids), max_tokens, temperature,
// top_p, seed, stream, stop (one-character strings: one token each),
// stop_token_ids, n (only 1), user (ignored). Anything else is a 400.
// Throws ApiError (400; 404 for another model's name).
CompletionRequest parse_completion_request(std::string_view body, const ModelConfig& model);

// {"error": {"message", "type", "param", "code"}} as OpenAI sends it.
gpulab::Json error_body(int status, const std::string& field, const std::string& message);

struct CompletionResult {
  std::string id;  // "cmpl-<n>"
  std::int64_t created = 0;
  std::vector<TokenId> tokens;  // every emitted token; a final stop token is not shown in the text
  FinishReason finish = FinishReason::kLength;
  std::size_t prompt_tokens = 0, cached_tokens = 0;
};

// The text of `tokens`, without a final stop token (OpenAI leaves the stop sequence out).
std::string completion_text(const std::vector<TokenId>& tokens, FinishReason finish);
gpulab::Json completion_body(const CompletionResult& r, const std::string& model);
// One server-sent event's JSON: a piece of text, and on the last one the finish and usage.
gpulab::Json stream_chunk(const std::string& id, std::int64_t created, const std::string& model,
                          const std::string& text, const CompletionResult* final_result);
gpulab::Json models_body(const ModelConfig& model);

}  // namespace serving
