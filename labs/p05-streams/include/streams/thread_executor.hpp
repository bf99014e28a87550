// The wall-clock backend: every stream is a worker thread draining a FIFO
// under a mutex and condition variable; an event is a counter plus a
// condition variable; an engine is a pool of slots handed out by priority.
// No busy-waiting anywhere. The destructor drains the queues, then joins.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "streams/executor.hpp"

namespace streams {

class ThreadExecutor final : public Executor {
 public:
  explicit ThreadExecutor(DefaultStream mode = DefaultStream::kPerThread);
  ~ThreadExecutor() override;

  [[nodiscard]] double now_ms() const override;
  // Called on a worker thread just before its stream blocks on an event that
  // has not fired: the deterministic interleaving hook of scenario 3. Set it
  // before issuing work.
  void set_wait_observer(std::function<void(StreamId)> observer) {
    observer_ = std::move(observer);
  }

 protected:
  void backend_add_stream(StreamId id, const StreamOptions& options) override;
  void backend_add_event(EventId id) override;
  void backend_add_engine(EngineId id, int slots) override;
  void issue(Node&& node) override;
  void issue_graph(const std::shared_ptr<const std::vector<Node>>& nodes,
                   std::span<const std::uint64_t> values) override;
  void drain() override;
  [[nodiscard]] bool fired(EventId event, std::uint64_t value) override;

 private:
  struct EventState {
    std::mutex m;
    std::condition_variable cv;
    std::uint64_t value = 0;
    std::uint64_t give_up_above = ~std::uint64_t{0};  // shutdown: waits past this are released
  };
  struct EngineState {
    explicit EngineState(int s) : free_slots(s) {}
    std::mutex m;
    std::condition_variable cv;
    int free_slots;
    std::set<std::pair<int, std::uint64_t>> waiting;  // (priority, ticket): lowest first
    std::uint64_t next_ticket = 0;
    void acquire(int priority);
    void release();
  };
  // One queued node: owned (a single launch) or borrowed from a graph that
  // the executor keeps alive until the next synchronize().
  struct Item {
    const Node* node = nullptr;
    std::uint64_t value = 0;
    EventState* event = nullptr;
    std::unique_ptr<Node> owned;
  };
  struct StreamState {
    StreamId id = 0;
    int priority = 0;
    EngineState* engine = nullptr;
    std::mutex m;
    std::condition_variable cv;       // work arrived / stop
    std::condition_variable idle_cv;  // completed caught up with issued
    std::deque<Item> queue;
    std::uint64_t issued = 0;
    std::uint64_t completed = 0;
    bool stop = false;
    std::thread worker;
  };

  void worker_loop(StreamState& s);
  void execute(StreamState& s, const Item& item);

  std::vector<std::unique_ptr<StreamState>> streams_;
  std::vector<std::unique_ptr<EventState>> events_;
  std::vector<std::unique_ptr<EngineState>> engines_;
  std::vector<std::shared_ptr<const std::vector<Node>>> live_graphs_;
  std::function<void(StreamId)> observer_;
  std::mutex error_m_;
  std::exception_ptr first_error_;
  std::chrono::steady_clock::time_point epoch_ = std::chrono::steady_clock::now();
};

}  // namespace streams
