#include "serving/completion_client.hpp"

#include <fmt/format.h>
#include <httplib.h>

namespace serving {

using gpulab::Json;

namespace {

// The string at `pointer` in `j`, or "" when it is missing or not a string.
std::string string_at(const Json& j, const char* pointer) {
  const Json::json_pointer p(pointer);
  return j.is_object() && j.contains(p) && j.at(p).is_string() ? j.at(p).get<std::string>()
                                                               : std::string();
}

}  // namespace

void StreamReader::feed(std::string_view bytes, const std::function<void(const Json&)>& on_event) {
  buffer_.append(bytes);
  for (std::size_t end; (end = buffer_.find("\n\n")) != std::string::npos;) {
    const std::string event = buffer_.substr(0, end);
    buffer_.erase(0, end + 2);
    if (event.rfind("data: ", 0) != 0) continue;  // comments and other fields
    if (event == "data: [DONE]") {
      done_ = true;
      continue;
    }
    Json j = Json::parse(event.substr(6), nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      if (malformed_.empty()) malformed_ = event.substr(0, 80);
      continue;
    }
    ++events_;
    text_ += string_at(j, "/choices/0/text");
    if (const auto f = string_at(j, "/choices/0/finish_reason"); !f.empty()) finish_reason_ = f;
    if (on_event) on_event(j);
  }
}

std::string StreamReader::incomplete() const {
  if (!malformed_.empty())
    return fmt::format("the stream carried an event that is not JSON: '{}'", malformed_);
  if (finish_reason_.empty()) {
    return fmt::format(
        "the stream ended after {} events without a finish_reason (the server went away "
        "mid-answer)",
        events_);
  }
  if (!done_) return "the stream ended without its final [DONE]";
  return {};
}

CompletionAnswer complete(const CompletionTarget& target, const Json& request,
                          const std::function<void(const Json&)>& on_event) {
  httplib::Client c(target.host, target.port);
  c.set_connection_timeout(target.connect_timeout_s, 0);
  c.set_read_timeout(target.read_timeout_s, 0);
  const bool stream = request.value("stream", false);
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.headers = {{"Content-Type", "application/json"}};
  req.body = request.dump();
  StreamReader reader;
  std::string body;
  if (stream) {
    req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
      body.append(data, n);
      reader.feed(std::string_view(data, n), on_event);
      return true;
    };
  }
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  CompletionAnswer out;
  if (!c.send(req, res, err)) {
    // Headers may have arrived (a stream that began, then broke): what came
    // is kept for the caller to see, but it is not an answer.
    out.status = res.status > 0 ? res.status : 0;
    out.text = reader.text();
    out.error = fmt::format("connection error: {}", httplib::to_string(err));
    if (stream && reader.events() > 0)
      out.error += fmt::format(" after {} events, {}", reader.events(), reader.incomplete());
    return out;
  }
  out.status = res.status;
  if (!stream) body = res.body;
  if (res.status != 200) {
    // A refusal is one JSON body, also when a stream was asked for.
    out.body = Json::parse(body, nullptr, false);
    const std::string message = string_at(out.body, "/error/message");
    out.error =
        fmt::format("HTTP {}: {}", res.status, message.empty() ? body.substr(0, 200) : message);
    return out;
  }
  if (stream) {
    out.text = reader.text();
    out.finish_reason = reader.finish_reason();
    out.error = reader.incomplete();
    out.ok = out.error.empty();
    return out;
  }
  out.body = Json::parse(body, nullptr, false);
  const Json::json_pointer text("/choices/0/text");
  out.finish_reason = string_at(out.body, "/choices/0/finish_reason");
  const bool has_text =
      out.body.is_object() && out.body.contains(text) && out.body.at(text).is_string();
  if (out.finish_reason.empty() || !has_text) {
    out.error = fmt::format("the answer is not a whole completion: '{}'", body.substr(0, 200));
    return out;
  }
  out.text = out.body.at(text).get<std::string>();
  out.ok = true;
  return out;
}

}  // namespace serving
