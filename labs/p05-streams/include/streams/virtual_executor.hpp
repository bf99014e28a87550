// The virtual-time backend: the same semantics as ThreadExecutor, computed as
// a discrete-event simulation in virtual milliseconds. Deterministic: ops
// start in (time, stream id) order and an engine slot goes to the lowest
// priority number, then the earliest request. Tests assert exact overlap
// and ordering with it instead of trusting wall-clock timing.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "streams/executor.hpp"

namespace streams {

struct Span {
  StreamId stream = 0;
  std::string name;
  double start_ms = 0;
  double end_ms = 0;
};

class VirtualExecutor final : public Executor {
 public:
  explicit VirtualExecutor(DefaultStream mode = DefaultStream::kPerThread);

  [[nodiscard]] double now_ms() const override { return now_; }
  // Every op that has run, in start order.
  [[nodiscard]] const std::vector<Span>& timeline() const { return timeline_; }

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
  struct VStream {
    StreamOptions options;
    std::deque<Node> queue;
    bool running = false;       // an op occupies the stream until busy_until
    bool wants_engine = false;  // head op is waiting for an engine slot
    std::uint64_t ticket = 0;
    double busy_until = 0;
  };
  struct VEngine {
    int free_slots = 0;
  };
  bool advance_stream(StreamId id);
  void start_op(StreamId id);

  double now_ = 0;
  std::uint64_t next_ticket_ = 0;
  std::vector<VStream> vstreams_;
  std::vector<std::uint64_t> values_;  // fired value per event
  std::vector<VEngine> vengines_;
  std::vector<Span> timeline_;
};

}  // namespace streams
