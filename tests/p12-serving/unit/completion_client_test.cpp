// StreamReader: a streamed completion is complete only with its finish_reason
// and the final [DONE]; a stream cut anywhere before that is reported, never
// taken for a shorter answer.
#include "serving/completion_client.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using serving::StreamReader;

// What gpulab-serve sends for "ab" (two tokens, then the end).
const std::string kWhole =
    "data: {\"choices\":[{\"text\":\"a\",\"finish_reason\":null}]}\n\n"
    "data: "
    "{\"choices\":[{\"text\":\"b\",\"finish_reason\":\"length\"}],\"usage\":{\"completion_tokens\":"
    "2}}\n\n"
    "data: [DONE]\n\n";

TEST(StreamReader, AWholeStreamIsCompleteWhateverTheChunking) {
  for (std::size_t chunk : {std::size_t{1}, std::size_t{7}, kWhole.size()}) {
    StreamReader r;
    int events = 0;
    for (std::size_t i = 0; i < kWhole.size(); i += chunk) {
      r.feed(std::string_view(kWhole).substr(i, chunk), [&](const gpulab::Json&) { ++events; });
    }
    EXPECT_EQ(r.incomplete(), "") << "chunk " << chunk;
    EXPECT_EQ(r.text(), "ab");
    EXPECT_EQ(r.finish_reason(), "length");
    EXPECT_EQ(events, 2);
  }
}

TEST(StreamReader, EveryCutBeforeTheEndIsIncomplete) {
  const auto done = kWhole.find("data: [DONE]");
  for (std::size_t cut = 0; cut < kWhole.size(); ++cut) {
    StreamReader r;
    r.feed(std::string_view(kWhole).substr(0, cut), {});
    EXPECT_NE(r.incomplete(), "") << "cut at byte " << cut << " passed as complete";
    if (cut >= done) {
      EXPECT_EQ(r.incomplete(), "the stream ended without its final [DONE]") << cut;
    }
  }
  StreamReader r;
  r.feed(kWhole.substr(0, kWhole.find("data: {\"choices\":[{\"text\":\"b\"")), {});
  EXPECT_EQ(
      r.incomplete(),
      "the stream ended after 1 events without a finish_reason (the server went away mid-answer)");
  EXPECT_EQ(r.text(), "a");
}

TEST(StreamReader, ADoneWithoutAFinishReasonOrAGarbledEventIsNotComplete) {
  StreamReader r;
  r.feed("data: {\"choices\":[{\"text\":\"a\",\"finish_reason\":null}]}\n\ndata: [DONE]\n\n", {});
  EXPECT_NE(r.incomplete(), "");
  StreamReader g;
  g.feed(
      "data: {\"choices\":[{\"text\":\"a\",\"finish_reason\":\"stop\"}]}\n\ndata: {trunc\n\ndata: "
      "[DONE]\n\n",
      {});
  EXPECT_EQ(g.incomplete(), "the stream carried an event that is not JSON: 'data: {trunc'");
}

}  // namespace
