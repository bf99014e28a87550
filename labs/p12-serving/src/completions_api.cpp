#include "serving/completions_api.hpp"

#include <fmt/format.h>

#include <limits>

#include "serving/tokenizer.hpp"

namespace serving {
namespace {

ApiError bad(const std::string& field, const std::string& message) {
  return ApiError(400, field, fmt::format("{}: {}", field, message));
}

TokenId token_id(const gpulab::Json& v, const std::string& field, std::size_t vocab) {
  if (!v.is_number_integer()) throw bad(field, "token ids must be integers");
  const auto id = v.get<std::int64_t>();
  if (id < 0 || static_cast<std::uint64_t>(id) >= vocab)
    throw bad(field, fmt::format("token id {} is outside the vocab of {}", id, vocab));
  return static_cast<TokenId>(id);
}

std::vector<TokenId> text_tokens(const std::string& text, const std::string& field) {
  auto ids = encode(text);
  if (!ids)
    throw bad(field, fmt::format("byte {} is not ASCII (the tokenizer has one token per ASCII character)",
                                 first_non_ascii(text)));
  return *ids;
}

}  // namespace

CompletionRequest parse_completion_request(std::string_view body, const ModelConfig& model) {
  gpulab::Json j;
  try {
    j = gpulab::Json::parse(body);
  } catch (const gpulab::Json::parse_error& e) {
    throw ApiError(400, "body", fmt::format("body: malformed JSON at byte {}", e.byte));
  }
  if (!j.is_object()) throw ApiError(400, "body", "body: expected a JSON object");
  CompletionRequest r;
  r.params.temperature = 1.0;
  bool have_prompt = false;
  for (const auto& [key, v] : j.items()) {
    if (key == "model") {
      if (!v.is_string()) throw bad(key, "must be a string");
      if (v.get<std::string>() != model.name)
        throw ApiError(404, key, fmt::format("model: '{}' is not served here (this server serves '{}')",
                                             v.get<std::string>(), model.name));
    } else if (key == "prompt") {
      have_prompt = true;
      if (v.is_string()) {
        r.prompt = text_tokens(v.get<std::string>(), key);
      } else if (v.is_array() && !v.empty() && (v[0].is_string() || v[0].is_array())) {
        throw bad(key, "a list of prompts is not supported: send one request per prompt");
      } else if (v.is_array()) {
        for (const auto& t : v) r.prompt.push_back(token_id(t, key, model.vocab));
      } else {
        throw bad(key, "must be a string or an array of token ids");
      }
      if (r.prompt.empty()) throw bad(key, "must hold at least one token");
      if (r.prompt.size() >= model.max_context)
        throw bad(key, fmt::format("{} tokens; the model's context is {}, so at most {}", r.prompt.size(),
                                   model.max_context, model.max_context - 1));
    } else if (key == "max_tokens") {
      if (!v.is_number_integer() || v.get<std::int64_t>() < 1)
        throw bad(key, "must be a whole number >= 1");
      if (v.get<std::int64_t>() >= static_cast<std::int64_t>(model.max_context))
        throw bad(key, fmt::format("{} exceeds the model's context of {}", v.get<std::int64_t>(),
                                   model.max_context));
      r.params.max_tokens = v.get<std::size_t>();
    } else if (key == "temperature") {
      if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > 2) throw bad(key, "must be a number in [0, 2]");
      r.params.temperature = v.get<double>();
    } else if (key == "top_p") {
      if (!v.is_number() || !(v.get<double>() > 0) || v.get<double>() > 1) throw bad(key, "must be a number in (0, 1]");
      r.params.top_p = v.get<double>();
    } else if (key == "seed") {
      if (!v.is_number_integer() || v.get<std::int64_t>() < 0) throw bad(key, "must be a whole number >= 0");
      r.params.seed = v.get<std::uint64_t>();
    } else if (key == "stream") {
      if (!v.is_boolean()) throw bad(key, "must be true or false");
      r.stream = v.get<bool>();
    } else if (key == "stop") {
      const auto one = [&](const gpulab::Json& s) {
        if (!s.is_string()) throw bad(key, "must be a string or an array of strings");
        const auto ids = text_tokens(s.get<std::string>(), key);
        if (ids.size() != 1)
          throw bad(key, fmt::format("'{}' is {} tokens; only single-token stops are supported", s.get<std::string>(),
                                     ids.size()));
        r.params.stop.push_back(ids[0]);
      };
      if (v.is_array()) {
        for (const auto& s : v) one(s);
      } else if (!v.is_null()) {
        one(v);
      }
    } else if (key == "stop_token_ids") {
      if (!v.is_array()) throw bad(key, "must be an array of token ids");
      for (const auto& t : v) r.params.stop.push_back(token_id(t, key, model.vocab));
    } else if (key == "n") {
      if (!v.is_number_integer() || v.get<std::int64_t>() != 1) throw bad(key, "only n = 1 is supported");
    } else if (key == "user") {
      if (!v.is_string()) throw bad(key, "must be a string");
    } else {
      throw ApiError(400, key, fmt::format("{}: unknown field", key));
    }
  }
  if (!have_prompt) throw bad("prompt", "is required");
  return r;
}

gpulab::Json error_body(int status, const std::string& field, const std::string& message) {
  const char* type = status == 429 ? "rate_limit_error" : status >= 500 ? "server_error" : "invalid_request_error";
  return {{"error",
           {{"message", message}, {"type", type}, {"param", field.empty() ? gpulab::Json() : gpulab::Json(field)},
            {"code", status}}}};
}

std::string completion_text(const std::vector<TokenId>& tokens, FinishReason finish) {
  if (finish == FinishReason::kStop && !tokens.empty())
    return decode(std::vector<TokenId>(tokens.begin(), tokens.end() - 1));
  return decode(tokens);
}

namespace {
gpulab::Json usage(const CompletionResult& r) {
  return {{"prompt_tokens", r.prompt_tokens},
          {"completion_tokens", r.tokens.size()},
          {"total_tokens", r.prompt_tokens + r.tokens.size()},
          {"prompt_tokens_details", {{"cached_tokens", r.cached_tokens}}}};
}
}  // namespace

gpulab::Json completion_body(const CompletionResult& r, const std::string& model) {
  return {{"id", r.id},
          {"object", "text_completion"},
          {"created", r.created},
          {"model", model},
          {"choices",
           gpulab::Json::array({{{"index", 0},
                                 {"text", completion_text(r.tokens, r.finish)},
                                 {"logprobs", nullptr},
                                 {"finish_reason", std::string(finish_reason_name(r.finish))}}})},
          {"usage", usage(r)}};
}

gpulab::Json stream_chunk(const std::string& id, std::int64_t created, const std::string& model,
                          const std::string& text, const CompletionResult* final_result) {
  gpulab::Json choice = {{"index", 0}, {"text", text}, {"logprobs", nullptr}, {"finish_reason", nullptr}};
  if (final_result) choice["finish_reason"] = std::string(finish_reason_name(final_result->finish));
  gpulab::Json chunk = {{"id", id},
                        {"object", "text_completion"},
                        {"created", created},
                        {"model", model},
                        {"choices", gpulab::Json::array({choice})}};
  if (final_result) chunk["usage"] = usage(*final_result);
  return chunk;
}

gpulab::Json models_body(const ModelConfig& model) {
  return {{"object", "list"},
          {"data", gpulab::Json::array({{{"id", model.name},
                                         {"object", "model"},
                                         {"created", 0},
                                         {"owned_by", "gpulab"},
                                         {"max_model_len", model.max_context}}})}};
}

}  // namespace serving
