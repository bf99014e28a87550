// gpulab-serve over real HTTP on a loopback port: the OpenAI completions
// shape, streaming, the model list, health, metrics, every refusal, and
// client disconnects.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "gpulab/json.hpp"
#include "gpulab/prom_text.hpp"
#include "serving/completion_client.hpp"
#include "serving/reference_decoder.hpp"
#include "gpulab_test/program_run.hpp"
#include "gpulab_test/raw_tcp.hpp"
#include "server_process.hpp"
#include "test_support.hpp"

namespace {

using gpulab::Json;
using serving_test::ServerProcess;

httplib::Client client(const ServerProcess& s) {
  httplib::Client c("127.0.0.1", s.port());
  c.set_read_timeout(120, 0);
  c.set_connection_timeout(30, 0);
  return c;
}

httplib::Result post(const ServerProcess& s, const Json& body) {
  return client(s).Post("/v1/completions", body.dump(), "application/json");
}

std::vector<serving::TokenId> reference_tokens(const std::vector<serving::TokenId>& prompt, std::size_t n,
                                               std::vector<serving::TokenId> stop = {}) {
  serving::ReferenceDecoder ref(serving_test::tiny_model());
  serving::SamplingParams p;
  p.max_tokens = n;
  p.stop = std::move(stop);
  return ref.generate(prompt, p).tokens;
}

const std::vector<std::string> kTiny = {"--model", "tiny", "--backend", "cpu_ref"};

TEST(Server, CompletionsAnswerInTheOpenAIShapeWithTheReferencesTokens) {
  ServerProcess s(kTiny);
  ASSERT_TRUE(s.up());
  auto r = post(s, {{"model", "tiny"}, {"prompt", "Hello"}, {"max_tokens", 9}, {"temperature", 0}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const Json j = Json::parse(r->body);
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["model"], "tiny");
  EXPECT_EQ(j["id"].get<std::string>().rfind("cmpl-", 0), 0u);
  const auto want = reference_tokens(*serving::encode("Hello"), 9);
  EXPECT_EQ(j["choices"][0]["text"], serving::decode(want));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 5);
  EXPECT_EQ(j["usage"]["completion_tokens"], 9);
  EXPECT_EQ(j["usage"]["total_tokens"], 14);
}

TEST(Server, TokenIdPromptsAndStopTokens) {
  ServerProcess s(kTiny);
  ASSERT_TRUE(s.up());
  const std::vector<serving::TokenId> prompt = {3, 1, 4, 1, 5, 9, 2, 6};
  const auto free_run = reference_tokens(prompt, 12);
  const serving::TokenId stop = free_run[4];
  auto r = post(s, {{"prompt", prompt}, {"max_tokens", 12}, {"temperature", 0}, {"stop_token_ids", {stop}}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const Json j = Json::parse(r->body);
  const auto want = reference_tokens(prompt, 12, {stop});
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  // The stop token is counted but not shown.
  EXPECT_EQ(j["usage"]["completion_tokens"], want.size());
  EXPECT_EQ(j["choices"][0]["text"], serving::decode(std::vector<serving::TokenId>(want.begin(), want.end() - 1)));
}

TEST(Server, StreamingSendsTheSameTextAsServerSentEvents) {
  ServerProcess s(kTiny);
  ASSERT_TRUE(s.up());
  const Json body = {{"prompt", "stream me"}, {"max_tokens", 7}, {"temperature", 0}, {"stream", true}};
  std::string raw;
  auto r = client(s).Post("/v1/completions", httplib::Headers{}, body.dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/event-stream");
  raw = r->body;
  std::string text;
  Json last;
  std::size_t events = 0;
  for (std::size_t at = 0; (at = raw.find("data: ", at)) != std::string::npos;) {
    const auto end = raw.find("\n\n", at);
    ASSERT_NE(end, std::string::npos) << raw;
    const std::string data = raw.substr(at + 6, end - at - 6);
    at = end + 2;
    ++events;
    if (data == "[DONE]") {
      EXPECT_EQ(at, raw.size()) << "[DONE] is the last event";
      break;
    }
    last = Json::parse(data);
    text += last["choices"][0]["text"].get<std::string>();
  }
  EXPECT_EQ(events, 8u) << "7 tokens and [DONE]";
  EXPECT_EQ(text, serving::decode(reference_tokens(*serving::encode("stream me"), 7)));
  EXPECT_EQ(last["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(last["usage"]["completion_tokens"], 7);
}

// A second server on a port that is taken refuses to start with one line, exit 1.
TEST(Server, ASecondServerOnATakenPortRefusesToStart) {
  ServerProcess first(kTiny);
  ASSERT_NE(first.port(), 0);
  const auto second = gpulab_test::run_program(
      "gpulab-serve", "--model tiny --backend cpu_ref --listen 127.0.0.1:" + std::to_string(first.port()));
  EXPECT_EQ(second.exit_code, 1) << second.out << second.err;
  EXPECT_NE(second.err.find("gpulab-serve: error: cannot listen on 127.0.0.1:" +
                            std::to_string(first.port())),
            std::string::npos)
      << second.err;
}

// Idle and half-sent connections wait off the HTTP workers (common's HttpService): before, each
// held one of the two workers for the 10 s read timeout and /health queued behind them.
TEST(Server, IdleConnectionsDoNotKeepARequestWaiting) {
  auto args = kTiny;
  args.insert(args.end(), {"--threads", "2"});
  ServerProcess s(args);
  ASSERT_TRUE(s.up());
  std::vector<int> fds;
  for (int i = 0; i < 20; ++i) {
    const int fd = gpulab_test::connect_to(s.port());
    ASSERT_GE(fd, 0);
    fds.push_back(fd);
  }
  ASSERT_TRUE(gpulab_test::send_all(fds[0], "GET /heal"));  // half a request line, then silence
  httplib::Client c("127.0.0.1", s.port());
  c.set_connection_timeout(5, 0);
  c.set_read_timeout(5, 0);
  for (int i = 0; i < 3; ++i) {
    const auto res = c.Get("/health");
    ASSERT_TRUE(res) << "GET /health got no answer within 5 s: " << httplib::to_string(res.error());
    EXPECT_EQ(res->status, 200);
  }
  for (const int fd : fds) ::close(fd);
}

TEST(Server, ModelsHealthAndMetrics) {
  ServerProcess s(kTiny);
  ASSERT_TRUE(s.up());
  auto c = client(s);
  auto models = c.Get("/v1/models");
  ASSERT_TRUE(models);
  EXPECT_EQ(models->status, 200);
  EXPECT_EQ(Json::parse(models->body)["data"][0]["id"], "tiny");
  auto health = c.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  // Two requests sharing a 40-token prefix: the second skips its full blocks.
  const std::string shared(40, 'x');
  for (const char* tail : {"a", "b"}) {
    auto r = post(s, {{"prompt", shared + tail}, {"max_tokens", 3}});
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    if (std::string(tail) == "b") {
      EXPECT_EQ(Json::parse(r->body)["usage"]["prompt_tokens_details"]["cached_tokens"], 32);
    }
  }
  auto m = c.Get("/metrics");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->status, 200);
  auto parsed = gpulab::prom::parse(m->body);
  ASSERT_TRUE(parsed) << parsed.error().message << "\n" << m->body;
  auto value = [&](const char* name) {
    const auto* f = parsed.value().find(name);
    EXPECT_NE(f, nullptr) << name;
    const auto* series = f ? f->find({}) : nullptr;
    return series ? series->value : -1.0;
  };
  EXPECT_EQ(value("serving_requests_finished_total"), 2);
  EXPECT_EQ(value("serving_generation_tokens_total"), 6);
  EXPECT_EQ(value("serving_prefix_cache_skipped_tokens_total"), 32);
  EXPECT_EQ(value("serving_requests_running"), 0);
  EXPECT_EQ(value("serving_requests_waiting"), 0);
  EXPECT_GT(value("serving_kv_blocks_free"), 0);
  EXPECT_EQ(value("serving_preemptions_total"), 0);
  const auto* ttft = parsed.value().find("serving_ttft_seconds");
  ASSERT_NE(ttft, nullptr);
  EXPECT_EQ(ttft->find({})->cumulative.back(), 2) << "one TTFT per request";
  const auto* tpot = parsed.value().find("serving_tpot_seconds");
  ASSERT_NE(tpot, nullptr);
  EXPECT_EQ(tpot->find({})->cumulative.back(), 4) << "two gaps per 3-token request";
  // The P10 SLO pack's SLIs read the buckets at its thresholds.
  EXPECT_NE(m->body.find("serving_ttft_seconds_bucket{le=\"0.3\"}"), std::string::npos) << m->body;
  EXPECT_NE(m->body.find("serving_tpot_seconds_bucket{le=\"0.04\"}"), std::string::npos) << m->body;
  const char* promtool = "/usr/bin/promtool";
  if (std::filesystem::exists(promtool)) {
    const std::string file = s.dir() + "/metrics.prom";
    std::ofstream(file) << m->body;
    const std::string cmd = std::string(promtool) + " check metrics < " + file + " 2>&1";
    std::string out;
    if (FILE* p = popen(cmd.c_str(), "r")) {
      char buf[4096];
      for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
      EXPECT_EQ(pclose(p), 0) << out;
    }
    EXPECT_EQ(out, "") << "promtool findings";
  }
}

TEST(Server, BadRequestsGet4xxNamingTheField) {
  ServerProcess s(kTiny);
  ASSERT_TRUE(s.up());
  auto expect = [&](const std::string& body, int status, const std::string& param, const std::string& message) {
    auto r = client(s).Post("/v1/completions", body, "application/json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, status) << body << " -> " << r->body;
    const Json j = Json::parse(r->body);
    EXPECT_EQ(j["error"]["message"], message) << body;
    if (!param.empty()) {
      EXPECT_EQ(j["error"]["param"], param) << body;
    }
  };
  expect("{", 400, "body", "body: malformed JSON at byte 2");
  expect(R"({"prompt": "x", "max_token": 3})", 400, "max_token", "max_token: unknown field");
  expect(R"({"max_tokens": 3})", 400, "prompt", "prompt: is required");
  expect(R"({"prompt": "x", "max_tokens": 0})", 400, "max_tokens", "max_tokens: must be a whole number >= 1");
  expect(R"({"prompt": "x", "temperature": -1})", 400, "temperature", "temperature: must be a number in [0, 2]");
  expect(R"({"prompt": "x", "top_p": 0})", 400, "top_p", "top_p: must be a number in (0, 1]");
  expect(R"({"prompt": [1, 999]})", 400, "prompt", "prompt: token id 999 is outside the vocab of 128");
  expect(R"({"prompt": "caf\u00e9"})", 400, "prompt",
         "prompt: byte 3 is not ASCII (the tokenizer has one token per ASCII character)");
  expect(R"({"prompt": "x", "stop": "ab"})", 400, "stop", "stop: 'ab' is 2 tokens; only single-token stops are supported");
  expect(R"({"prompt": "x", "n": 2})", 400, "n", "n: only n = 1 is supported");
  expect(R"({"prompt": "x", "model": "gpt-4"})", 404, "model",
         "model: 'gpt-4' is not served here (this server serves 'tiny')");
  expect(Json({{"prompt", std::string(300, 'a')}}).dump(), 400, "prompt",
         "prompt: 300 tokens; the model's context is 256, so at most 255");
  expect(Json({{"prompt", std::string(2 << 20, 'a')}}).dump(), 413, "body",
         "body: larger than the limit of 1048576 bytes");
  auto missing = client(s).Get("/v1/nothing");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
}

double metric(const ServerProcess& s, const char* name) {
  auto m = client(s).Get("/metrics");
  if (!m || m->status != 200) return -1;
  auto parsed = gpulab::prom::parse(m->body);
  if (!parsed) return -1;
  const auto* f = parsed.value().find(name);
  return f && f->find({}) ? f->find({})->value : -1;
}

// Polls until `cond` holds; the deadline only bounds a broken server.
template <class Cond>
bool eventually(Cond cond) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return cond();
}

// A model slow enough on cpu_ref (4096-token context) that a long request is still
// generating while a test acts on the server; the file goes when the test ends.
struct SlowModelFile {
  SlowModelFile() {
    const int fd = mkstemps(path, 5);
    if (fd < 0) throw std::runtime_error("mkstemps: cannot create the slow model's config");
    close(fd);
    std::ofstream(path) << R"({"name": "slow", "layers": 4, "d_model": 256, "heads": 4, "kv_heads": 2,
                               "ffn": 512, "max_context": 4096})";
  }
  ~SlowModelFile() { std::filesystem::remove(path); }
  SlowModelFile(const SlowModelFile&) = delete;
  SlowModelFile& operator=(const SlowModelFile&) = delete;
  char path[40] = "/tmp/gpulab-serve-slow-XXXXXX.json";
};

TEST(Server, AFullQueueGets429AndADisconnectedStreamIsCancelled) {
  // Request A is still generating while the test fills the one queue slot and overflows it.
  const SlowModelFile slow;
  const char* path = slow.path;
  ServerProcess s({"--model", path, "--backend", "cpu_ref", "--max-running", "1", "--max-waiting", "1"});
  ASSERT_TRUE(s.up());

  std::atomic<bool> a_streaming{false}, a_stop{false};
  std::thread a([&] {
    const Json body = {{"prompt", "A"}, {"max_tokens", 4000}, {"stream", true}};
    httplib::Client c = client(s);
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/completions";
    req.headers = {{"Content-Type", "application/json"}};
    req.body = body.dump();
    req.content_receiver = [&](const char*, std::size_t, std::uint64_t, std::uint64_t) {
      a_streaming = true;
      return !a_stop.load();  // false: the client hangs up mid-stream
    };
    httplib::Response res;
    httplib::Error err = httplib::Error::Success;
    c.send(req, res, err);
  });
  ASSERT_TRUE(eventually([&] { return a_streaming.load(); }));
  int b_status = 0;
  std::thread b([&] {
    auto r = post(s, {{"prompt", "B"}, {"max_tokens", 2}});
    b_status = r ? r->status : -1;
  });
  ASSERT_TRUE(eventually([&] { return metric(s, "serving_requests_waiting") == 1; }));
  EXPECT_EQ(metric(s, "serving_requests_running"), 1);

  auto c = post(s, {{"prompt", "C"}, {"max_tokens", 2}});
  ASSERT_TRUE(c);
  EXPECT_EQ(c->status, 429) << c->body;
  EXPECT_EQ(Json::parse(c->body)["error"]["message"], "queue full: 1 requests waiting (--max-waiting)");
  EXPECT_EQ(c->get_header_value("Retry-After"), "1");

  a_stop = true;  // A's client goes away: the server cancels A, and B runs
  a.join();
  b.join();
  EXPECT_EQ(b_status, 200);
  EXPECT_TRUE(eventually([&] { return metric(s, "serving_requests_running") == 0; }));
  EXPECT_EQ(metric(s, "serving_kv_blocks_used"), 0);
  EXPECT_EQ(metric(s, "serving_requests_finished_total"), 2) << "A (cancelled) and B";
}

TEST(Server, AServerKilledMidRequestGivesItsClientsErrorsAndARestartAnswersRightAgain) {
  // A 4000-token stream is still generating when the server dies, and with one
  // running slot the plain request waits behind it.
  const SlowModelFile slow;
  const char* path = slow.path;
  const std::vector<std::string> args{"--model", path, "--backend", "cpu_ref", "--max-running", "1"};
  auto s = std::make_unique<ServerProcess>(args);
  ASSERT_TRUE(s->up());
  const int port = s->port();
  const serving::CompletionTarget target{"127.0.0.1", port, 30, 600};
  const Json small = {{"prompt", "Hello"}, {"max_tokens", 6}, {"temperature", 0}};
  const auto before = serving::complete(target, small);
  ASSERT_TRUE(before.ok) << before.error;

  std::atomic<int> stream_events{0};
  serving::CompletionAnswer streamed, plain;
  std::thread a([&] {
    streamed = serving::complete(target, {{"prompt", "A"}, {"max_tokens", 4000}, {"temperature", 0}, {"stream", true}},
                                 [&](const Json&) { ++stream_events; });
  });
  ASSERT_TRUE(eventually([&] { return stream_events.load() > 0; }));
  std::thread b([&] { plain = serving::complete(target, {{"prompt", "B"}, {"max_tokens", 4}, {"temperature", 0}}); });
  ASSERT_TRUE(eventually([&] { return metric(*s, "serving_requests_waiting") == 1; }));
  EXPECT_EQ(metric(*s, "serving_requests_running"), 1);
  s->kill9();
  a.join();
  b.join();
  // Neither client takes what it got for an answer.
  EXPECT_FALSE(streamed.ok) << "a stream cut by the kill passed as a whole answer of " << streamed.text.size()
                            << " characters";
  // The stream had begun and never ended: a close reads as the end of the
  // body, a reset as a read error; either way the client says it is cut short.
  EXPECT_NE(streamed.error.find("without a finish_reason"), std::string::npos) << streamed.error;
  EXPECT_GT(streamed.text.size(), 0U);
  EXPECT_LT(streamed.text.size(), 4000U);
  EXPECT_FALSE(plain.ok);
  EXPECT_EQ(plain.status, 0) << "no HTTP answer at all: " << plain.error;
  EXPECT_EQ(plain.error.rfind("connection error: ", 0), 0U) << plain.error;

  // Restarted on the same port, the server answers as before, and as the reference decoder does.
  s = std::make_unique<ServerProcess>(args, port);
  ASSERT_TRUE(s->up());
  const auto after = serving::complete(target, small);
  ASSERT_TRUE(after.ok) << after.error;
  EXPECT_EQ(after.text, before.text);
  EXPECT_EQ(after.finish_reason, "length");
  serving::Model model(serving::load_model_config(path), serving::choose_backend(serving_test::registry(), "cpu_ref"));
  serving::SamplingParams p;
  p.max_tokens = 6;
  EXPECT_EQ(after.text, serving::decode(serving::ReferenceDecoder(model).generate(*serving::encode("Hello"), p).tokens));
  const auto again = serving::complete(target, {{"prompt", "A"}, {"max_tokens", 3}, {"temperature", 0}, {"stream", true}});
  EXPECT_TRUE(again.ok) << again.error;
  const auto n = std::min(again.text.size(), streamed.text.size());
  EXPECT_EQ(again.text.substr(0, n), streamed.text.substr(0, n)) << "the same greedy tokens as before the kill";
}

TEST(ServeCli, BadFlagsAreOneLineAndExit2) {
  const auto r = gpulab_test::run_program("gpulab-serve", "--listen nonsense");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpulab-serve: error: --listen: expected HOST:PORT with PORT in 0..65535, got 'nonsense'\n");
  const auto k = gpulab_test::run_program("gpulab-serve", "--model tiny --kv-blocks 3 generate --prompt x");
  EXPECT_EQ(k.exit_code, 2) << k.err;
  EXPECT_EQ(k.err, "gpulab-serve: error: --kv-blocks (3) x --block-size (16) must hold one full context of 256 tokens\n");
  const auto g = gpulab_test::run_program("gpulab-serve", "generate --model tiny --kv-blocks 3 --prompt x");
  EXPECT_EQ(g.exit_code, 2);
  EXPECT_EQ(g.err, "gpulab-serve: error: --kv-blocks (3) x --block-size (16) must hold one full context of 256 tokens\n");
  const auto m = gpulab_test::run_program("gpulab-serve", "generate --model /nonexistent.json --prompt x");
  EXPECT_EQ(m.exit_code, 2);
  EXPECT_NE(m.err.find("gpulab-serve: error: --model: "), std::string::npos) << m.err;
}

}  // namespace

namespace {

TEST(LoadGenerator, ReplaysATraceOverHttpAndSummarisesWithP07Metrics) {
  ServerProcess s(kTiny);
  ASSERT_TRUE(s.up());
  const std::string trace = s.dir() + "/trace.csv";
  std::ofstream(trace) << "arrival_ms,prompt_tokens,output_tokens\n0,20,5\n5,40,8\n10,20,3\n15,300,4\n";
  const auto r = gpulab_test::run_program(
      "gpulab-serve", "loadgen --json --url http://127.0.0.1:" + std::to_string(s.port()) + " --trace " + trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["requests"], 4);
  EXPECT_EQ(j["completed"], 4);
  EXPECT_EQ(j["failed"], 0);
  EXPECT_EQ(j["refused_429"], 0);
  EXPECT_EQ(j["clipped"], 1) << "the 300-token prompt does not fit a 256-token context";
  EXPECT_GT(j["throughput_tok_s"].get<double>(), 0);
  EXPECT_LE(j["ttft_p50_ms"].get<double>(), j["ttft_p99_ms"].get<double>());
  EXPECT_LE(j["goodput_tok_s"].get<double>(), j["throughput_tok_s"].get<double>());

  // Goodput counts only requests inside both SLOs: an SLO no request can meet gives 0, and one
  // every request meets gives the whole throughput.
  const std::string url = "http://127.0.0.1:" + std::to_string(s.port());
  const auto none =
      gpulab_test::run_program("gpulab-serve", "loadgen --json --url " + url + " --trace " + trace +
                                                   " --slo-ttft-ms 0.000001");
  ASSERT_EQ(none.exit_code, 0) << none.err;
  const Json n = Json::parse(none.out);
  EXPECT_EQ(n["slo_met"], 0);
  EXPECT_EQ(n["goodput_tok_s"].get<double>(), 0.0);
  const auto all =
      gpulab_test::run_program("gpulab-serve", "loadgen --json --url " + url + " --trace " + trace +
                                                   " --slo-ttft-ms 1e9 --slo-tpot-ms 1e9");
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const Json a = Json::parse(all.out);
  EXPECT_EQ(a["slo_met"], 4);
  EXPECT_DOUBLE_EQ(a["goodput_tok_s"].get<double>(), a["throughput_tok_s"].get<double>());
}

TEST(LoadGenerator, AnUnreachableServerIsOneLineAndExit1) {
  // Port 1 on loopback: nothing listens there for an unprivileged test.
  const auto r = gpulab_test::run_program(
      "gpulab-serve", std::string("loadgen --url http://127.0.0.1:1 --trace ") + GPULAB_LAB_DIR +
                          "/../p07-batching/traces/plain-sample.csv");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("gpulab-serve: error: cannot reach http://127.0.0.1:1: ", 0), 0u) << r.err;
  const auto bad = gpulab_test::run_program("gpulab-serve", "loadgen --url localhost:80 --trace x.csv");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "gpulab-serve: error: --url: expected http://HOST:PORT, got 'localhost:80'\n");
}

}  // namespace
