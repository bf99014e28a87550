// The exporter's waiting room. Every accepted connection waits here, on one
// poll() loop, until a whole request header has arrived; only then does a
// worker thread see it. A worker that waited on idle or trickling clients
// itself (httplib's model) let 32 idle connections delay a scrape by 10 s and
// 48 slow-header clients block it past 8 s, because a request's timeout only
// started when a worker picked the connection up. Here:
//  - the header must arrive whole within `request_timeout` of the accept (of
//    the first byte, for the next request on a kept-alive connection), and
//    within `max_request_bytes`;
//  - a kept-alive connection waits here, not in a worker, at most
//    `keep_alive_timeout` for its next request;
//  - connections are bounded in total and per client address: a new one
//    beyond either bound closes the oldest one still waiting (a connection
//    that never sent a request loses to one that just arrived), so a scrape
//    always gets in.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace exporter {

struct GateLimits {
  std::chrono::milliseconds request_timeout{5000};
  std::chrono::milliseconds keep_alive_timeout{5000};
  std::size_t max_request_bytes = 16 * 1024;
  std::size_t max_connections = 512;  // waiting and being served; below the usual 1024 fds
  std::size_t max_per_client = 128;   // from one IP address
};

// A connection whose request header has arrived whole.
struct ReadyConnection {
  int fd = -1;
  std::string peer;        // the client's IP address
  std::string received;    // the header, and whatever arrived after it
  std::size_t served = 0;  // requests already answered on this connection
};

class ConnectionGate {
 public:
  using Dispatch = std::function<void(ReadyConnection)>;
  // `listen_fd` stays owned by the caller; `dispatch` runs on the gate's
  // thread and must hand the connection over quickly (to a thread pool).
  ConnectionGate(int listen_fd, GateLimits limits, Dispatch dispatch);
  ~ConnectionGate();
  ConnectionGate(const ConnectionGate&) = delete;
  ConnectionGate& operator=(const ConnectionGate&) = delete;

  // Accepts and watches connections until stop(); false if the listening
  // socket failed.
  bool run();
  // From any thread, also before run(): run() returns soon after.
  void stop();
  // From a worker, once a request is answered: a kept-alive connection comes
  // back to wait for its next request; `finished` closes it.
  void keep(ReadyConnection c);
  void finished(ReadyConnection c);

  struct Counters {
    std::uint64_t accepted = 0;
    std::uint64_t timed_out = 0;  // no whole header within the deadline
    std::uint64_t evicted = 0;    // closed to make room for a newer connection
    std::uint64_t too_large = 0;  // header over max_request_bytes (431)
  };
  [[nodiscard]] Counters counters() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Waiting {
    ReadyConnection conn;
    Clock::time_point since;     // accepted, or given back after a request
    Clock::time_point deadline;  // for the whole header (or, idle, for its first byte)
    bool idle = false;           // kept alive and nothing received yet
  };

  void admit(int fd, std::string peer);
  void accept_all();
  enum class ReadState { kWaiting, kComplete, kTooLarge, kClosed };
  ReadState read_from(Waiting& w);
  bool evict_oldest(const std::string* peer);
  void close_waiting(std::size_t index);
  void release(int fd, const std::string& peer);
  void take_returned();
  [[nodiscard]] bool header_complete(const std::string& s) const;

  int listen_fd_;
  int wake_fd_;
  GateLimits limits_;
  Dispatch dispatch_;
  std::vector<Waiting> waiting_;  // gate thread only

  mutable std::mutex mu_;  // guards what workers touch
  bool stopping_ = false;
  std::vector<ReadyConnection> returned_;
  std::map<std::string, std::size_t> per_client_;
  std::size_t open_ = 0;
  Counters counters_;
};

}  // namespace exporter
