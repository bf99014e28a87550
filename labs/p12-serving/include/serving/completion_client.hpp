// The client side of POST /v1/completions, shared by the load generator and
// the tests. A streamed answer is complete only when its last JSON event
// carried a finish_reason and the final "data: [DONE]" arrived: gpulab-serve
// ends an event stream by closing the connection, so a server killed mid-answer
// looks to HTTP like a short, successful body. StreamReader holds that rule,
// and complete() reports such a stream (and any cut connection) as an error,
// never as a shorter answer.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/json.hpp"

namespace serving {

// Splits a text/event-stream body into its JSON events, whatever the chunking.
class StreamReader {
 public:
  // Feeds the next bytes; `on_event` gets each complete JSON event in order.
  void feed(std::string_view bytes, const std::function<void(const gpulab::Json&)>& on_event);
  // Empty when the stream is complete (finish_reason seen, then [DONE]); else
  // what is missing, in words.
  [[nodiscard]] std::string incomplete() const;
  [[nodiscard]] const std::string& text() const { return text_; }
  [[nodiscard]] const std::string& finish_reason() const { return finish_reason_; }
  [[nodiscard]] std::size_t events() const { return events_; }

 private:
  std::string buffer_;
  std::string text_;
  std::string finish_reason_;
  std::size_t events_ = 0;
  bool done_ = false;
  std::string malformed_;  // the first event that was not JSON
};

struct CompletionAnswer {
  bool ok = false;    // HTTP 200 and a complete answer
  int status = 0;     // the HTTP status; 0 when none arrived (a stream that broke keeps its 200)
  std::string error;  // why not ok: a connection error, an incomplete stream, an error body
  std::string
      text;  // choices[0].text (streamed: the events' texts joined, also of a broken stream)
  std::string finish_reason;
  gpulab::Json body;  // the JSON answer (not streamed), or the error body
};

struct CompletionTarget {
  std::string host;
  int port = 0;
  int connect_timeout_s = 30;
  int read_timeout_s = 600;
};

// POSTs `request` (its "stream" decides the mode). `on_event` (streamed only)
// sees every JSON event as it arrives.
CompletionAnswer complete(const CompletionTarget& target, const gpulab::Json& request,
                          const std::function<void(const gpulab::Json&)>& on_event = {});

}  // namespace serving
