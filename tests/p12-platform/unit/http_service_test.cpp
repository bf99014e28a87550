// The platform's HTTP server against idle and slow clients: they hold no
// worker, so an API call is answered while they wait, and they are cut off
// at the idle and read deadlines.
#include "platform/http_service.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <future>
#include <thread>

#include "gpulab_test/raw_tcp.hpp"
#include "platform/control_plane.hpp"
#include "platform/control_server.hpp"

namespace {

using namespace platform;
using gpulab_test::connect_to;

// True once the server has closed `fd` (EOF or reset), waiting up to `limit`.
bool closed_by_server(int fd, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) {
      char buf[256];
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return true;  // anything else is a response; keep reading
    }
  }
  return false;
}

class HttpServiceTest : public ::testing::Test {
 protected:
  void start(const HttpLimits& limits) {
    char tmpl[] = "/tmp/gpulab-http-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ControlOptions o;
    o.state_dir = dir_;
    o.public_url = "http://127.0.0.1:1";
    cp_ = std::make_unique<ControlPlane>(o);
    http_ = std::make_unique<HttpService>(limits);
    add_control_routes(*http_, *cp_);
    port_ = http_->bind("127.0.0.1:0");
    server_ = std::thread([this] { http_->listen_after_bind(); });
    while (!http_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  void TearDown() override {
    for (int fd : fds_) ::close(fd);
    if (http_) {
      http_->stop();
      server_.join();
    }
    http_.reset();
    cp_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::filesystem::path dir_;
  std::unique_ptr<ControlPlane> cp_;
  std::unique_ptr<HttpService> http_;
  std::thread server_;
  int port_ = 0;
  std::vector<int> fds_;
};

TEST_F(HttpServiceTest, FiftyIdleConnectionsDoNotKeepAnApiCallWaiting) {
  HttpLimits limits;
  limits.threads = 8;  // far fewer workers than idle clients
  start(limits);
  for (int i = 0; i < 50; ++i) {
    const int fd = connect_to(port_);
    ASSERT_GE(fd, 0);
    fds_.push_back(fd);
  }
  // Two of them send half a request line and stall.
  for (int i = 0; i < 2; ++i) ASSERT_EQ(::send(fds_[static_cast<std::size_t>(i)], "GET /v1/no", 10, MSG_NOSIGNAL), 10);
  // Before, each idle connection held a worker for the 5 s keep-alive wait and
  // this call queued behind them; the client gives up after 5 s.
  httplib::Client client("127.0.0.1", port_);
  client.set_connection_timeout(5, 0);
  client.set_read_timeout(5, 0);
  for (int i = 0; i < 3; ++i) {  // keep-alive: the same connection serves each
    const auto res = client.Get("/v1/nodes");
    ASSERT_TRUE(res) << "GET /v1/nodes got no answer within 5 s: " << httplib::to_string(res.error());
    EXPECT_EQ(res->status, 200);
    EXPECT_EQ(res->body, "[]\n");
  }
}

TEST_F(HttpServiceTest, IdleAndSlowHeaderClientsAreCutOffAtTheirDeadlines) {
  HttpLimits limits;
  limits.idle_timeout = std::chrono::milliseconds(200);
  limits.read_timeout = std::chrono::milliseconds(200);
  start(limits);
  const int idle = connect_to(port_);
  const int slow = connect_to(port_);
  ASSERT_GE(idle, 0);
  ASSERT_GE(slow, 0);
  fds_ = {idle, slow};
  ASSERT_EQ(::send(slow, "GET /v1/nodes HTTP/1.1\r\n", 24, MSG_NOSIGNAL), 24);  // and never the blank line
  EXPECT_TRUE(closed_by_server(idle, std::chrono::seconds(30)));
  EXPECT_TRUE(closed_by_server(slow, std::chrono::seconds(30)));
  // A whole request on a fresh connection is still answered.
  httplib::Client client("127.0.0.1", port_);
  const auto res = client.Get("/v1/nodes");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST_F(HttpServiceTest, PipelinedRequestsOnOneConnectionAreAllAnswered) {
  start(HttpLimits{});
  const int fd = connect_to(port_);
  ASSERT_GE(fd, 0);
  fds_ = {fd};
  const std::string two = "GET /v1/nodes HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/jobs HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(::send(fd, two.data(), two.size(), MSG_NOSIGNAL), static_cast<ssize_t>(two.size()));
  std::string got;
  char buf[4096];
  pollfd p{fd, POLLIN, 0};
  while (::poll(&p, 1, 30'000) > 0) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    got.append(buf, static_cast<std::size_t>(n));
  }
  std::size_t answers = 0;
  for (auto at = got.find("HTTP/1.1 200"); at != std::string::npos; at = got.find("HTTP/1.1 200", at + 1)) ++answers;
  EXPECT_EQ(answers, 2U) << got;
}

// stop() from another thread, as the daemons' signal-waiting thread calls it: the accept
// thread closes its own socket (httplib's stop() closed it on the caller's thread while the
// accept thread polled it).
TEST(HttpServiceStop, AStopFromAnotherThreadEndsTheListen) {
  HttpService http;
  ASSERT_GT(http.bind("127.0.0.1:0"), 0);
  auto served = std::async(std::launch::async, [&] { return http.listen_after_bind(); });
  while (!http.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  std::thread([&] { http.stop(); }).join();
  EXPECT_TRUE(served.get());  // true: stopped, not failed
  EXPECT_FALSE(http.is_running());
}

// A stop asked before the accept loop starts is kept (httplib's stop() ignores it, and the
// loop then served until killed): the loop ends at its first look.
TEST(HttpServiceStop, AStopAskedBeforeTheAcceptLoopStartsEndsIt) {
  HttpService http;
  ASSERT_GT(http.bind("127.0.0.1:0"), 0);
  http.stop();
  auto served = std::async(std::launch::async, [&] { return http.listen_after_bind(); });
  const bool ended = served.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  if (!ended) http.httplib::Server::stop();  // so the test ends and reports
  EXPECT_TRUE(ended) << "listen_after_bind() still serving 60 s after stop()";
  EXPECT_TRUE(served.get());
}

}  // namespace
