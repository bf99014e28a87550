// The CUDA execution model's issue API, shared by both backends: streams
// (FIFO), events (edges), the legacy default stream, host synchronisation,
// deadlock detection at issue time, and graph capture/replay.
//
// ThreadExecutor runs it on worker threads against the wall clock (the
// learner's demo); VirtualExecutor runs it as a discrete-event simulation in
// virtual milliseconds (exact, for tests). Issue from one host thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "streams/graph.hpp"
#include "streams/op.hpp"
#include "streams/wait_for_graph.hpp"

namespace streams {

class Executor {
 public:
  static constexpr StreamId kDefaultStream = 0;

  explicit Executor(DefaultStream mode);
  virtual ~Executor() = default;
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  EngineId create_engine(int slots);
  StreamId create_stream(StreamOptions options = {});
  EventId create_event();

  void launch(StreamId stream, Op op);
  // cudaEventRecord: the event's next value fires when `stream` gets here.
  void record(EventId event, StreamId stream);
  // cudaStreamWaitEvent: binds to the latest record issued so far (a no-op if none).
  void wait(StreamId stream, EventId event);
  // Timeline-semaphore wait (cuStreamWaitValue): for the `value`-th record,
  // which may not be issued yet. The only way to express a circular wait.
  void wait_value(StreamId stream, EventId event, std::uint64_t value);

  // cudaDeviceSynchronize. Throws std::runtime_error instead of hanging when a
  // pending wait can never be satisfied, and rethrows the first exception an op threw.
  void synchronize();
  // cudaEventQuery: has the latest issued record fired? (Host reads device state.)
  bool query(EventId event);

  // cudaStreamBeginCapture / EndCapture over all streams: work issued in
  // between is recorded into the Graph, not executed.
  void begin_capture();
  Graph end_capture();
  [[nodiscard]] bool capturing() const { return capture_ != nullptr; }
  // cudaGraphLaunch: the whole graph in one call. The graph may be launched many times.
  void launch_graph(const Graph& graph);

  [[nodiscard]] virtual double now_ms() const = 0;
  [[nodiscard]] DefaultStream default_stream_mode() const { return mode_; }
  [[nodiscard]] std::size_t streams() const { return streams_.size(); }
  [[nodiscard]] std::uint64_t issued_records(EventId event) const { return events_.at(event); }

 protected:
  // What a backend implements. `issue` receives nodes with absolute values;
  // `issue_graph` receives a graph's nodes with `values[i]` the absolute value
  // of node i.
  virtual void backend_add_stream(StreamId id, const StreamOptions& options) = 0;
  virtual void backend_add_event(EventId id) = 0;
  virtual void backend_add_engine(EngineId id, int slots) = 0;
  virtual void issue(Node&& node) = 0;
  virtual void issue_graph(const std::shared_ptr<const std::vector<Node>>& nodes,
                           std::span<const std::uint64_t> values) = 0;
  virtual void drain() = 0;
  [[nodiscard]] virtual bool fired(EventId event, std::uint64_t value) = 0;
  // The derived constructor calls this once its backend is ready: it creates
  // the default stream (id 0) and the legacy barrier event.
  void start();

 private:
  struct StreamInfo {
    StreamOptions options;
    std::uint64_t barrier_seen = 0;  // legacy: last default-stream barrier this stream waited for
    bool work_since_barrier = false;
    std::optional<EventId>
        tail_event;  // legacy: recorded so the default stream can wait for this stream
  };
  void check_stream(StreamId s) const;
  void check_event(EventId e) const;
  void submit(Node&& node, bool bound = true);
  void legacy_prelude(StreamId stream);
  void legacy_epilogue(StreamId stream);
  [[nodiscard]] bool is_legacy_default(StreamId s) const {
    return mode_ == DefaultStream::kLegacy && s == kDefaultStream;
  }
  void record_value(EventId event, StreamId stream, std::uint64_t value);

  DefaultStream mode_;
  std::vector<StreamInfo> streams_;
  std::vector<std::uint64_t> events_;  // records issued per event
  std::vector<int> engines_;
  WaitForGraph wait_for_;
  EventId barrier_event_ = 0;  // legacy default stream's barrier
  std::uint64_t barrier_value_ = 0;

  struct Capture {
    std::vector<Node> nodes;
    std::vector<std::uint64_t> counted;  // records captured per event
  };
  std::unique_ptr<Capture> capture_;
  std::vector<std::uint64_t> graph_values_;  // scratch for launch_graph
};

}  // namespace streams
