#include "streams/executor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace streams {

std::size_t Graph::ops() const {
  if (!nodes_) return 0;
  return static_cast<std::size_t>(std::count_if(
      nodes_->begin(), nodes_->end(), [](const Node& n) { return n.kind == NodeKind::kOp; }));
}

Executor::Executor(DefaultStream mode) : mode_(mode) {}

void Executor::start() {
  create_stream();  // stream 0: the default stream
  if (mode_ == DefaultStream::kLegacy) barrier_event_ = create_event();
}

EngineId Executor::create_engine(int slots) {
  if (slots < 1) throw std::invalid_argument("an engine needs at least one slot");
  const auto id = static_cast<EngineId>(engines_.size());
  engines_.push_back(slots);
  backend_add_engine(id, slots);
  return id;
}

StreamId Executor::create_stream(StreamOptions options) {
  if (options.engine && *options.engine >= engines_.size())
    throw std::invalid_argument("unknown engine");
  const auto id = static_cast<StreamId>(streams_.size());
  streams_.push_back(StreamInfo{options, barrier_value_, false, std::nullopt});
  backend_add_stream(id, options);
  return id;
}

EventId Executor::create_event() {
  const auto id = static_cast<EventId>(events_.size());
  events_.push_back(0);
  if (capture_) capture_->counted.push_back(0);  // an event created mid-capture
  backend_add_event(id);
  return id;
}

void Executor::check_stream(StreamId s) const {
  if (s >= streams_.size()) throw std::invalid_argument(fmt::format("unknown stream {}", s));
}

void Executor::check_event(EventId e) const {
  if (e >= events_.size()) throw std::invalid_argument(fmt::format("unknown event {}", e));
}

// Legacy default stream, before any node on `stream`: the default stream first
// waits for all blocking streams' work; any other blocking stream first waits
// for the default stream's latest work.
void Executor::legacy_prelude(StreamId stream) {
  if (mode_ != DefaultStream::kLegacy) return;
  if (stream == kDefaultStream) {
    for (StreamId s = 1; s < streams_.size(); ++s) {
      StreamInfo& info = streams_[s];
      if (!info.options.blocking || !info.work_since_barrier) continue;
      if (!info.tail_event) info.tail_event = create_event();
      const EventId tail = *info.tail_event;
      record_value(tail, s, events_[tail] + 1);
      wait_for_.add_wait(kDefaultStream, tail, events_[tail], true);
      issue(Node{NodeKind::kWait, kDefaultStream, {}, tail, events_[tail]});
      streams_[s].work_since_barrier = false;
    }
  } else if (StreamInfo& info = streams_[stream]; info.options.blocking) {
    if (info.barrier_seen < barrier_value_) {
      if (capture_) {
        throw CaptureError(
            fmt::format("stream {} would have to wait for the legacy default stream's work, which "
                        "is outside the capture "
                        "(synchronize before capturing, or use per-thread default streams)",
                        stream));
      }
      wait_for_.add_wait(stream, barrier_event_, barrier_value_, true);
      issue(Node{NodeKind::kWait, stream, {}, barrier_event_, barrier_value_});
      info.barrier_seen = barrier_value_;
    }
    info.work_since_barrier = true;
  }
}

void Executor::legacy_epilogue(StreamId stream) {
  if (!is_legacy_default(stream)) return;
  barrier_value_ = events_[barrier_event_] + 1;
  record_value(barrier_event_, kDefaultStream, barrier_value_);
}

// Internal records and waits of the legacy default stream bypass submit():
// they are the legacy semantics themselves.
void Executor::record_value(EventId event, StreamId stream, std::uint64_t value) {
  wait_for_.add_record(stream, event, value);
  events_[event] = value;
  issue(Node{NodeKind::kRecord, stream, {}, event, value});
}

void Executor::submit(Node&& node, bool bound) {
  const StreamId stream = node.stream;
  if (capture_) {
    if (is_legacy_default(stream)) {
      throw CaptureError(
          "the legacy default stream cannot be captured: it synchronises with every stream");
    }
    legacy_prelude(stream);
    capture_->nodes.push_back(std::move(node));
    return;
  }
  legacy_prelude(stream);
  // The wait-for graph sees nodes in the order the stream will run them.
  switch (node.kind) {
    case NodeKind::kOp:
      wait_for_.add_op(stream);
      break;
    case NodeKind::kWait:
      wait_for_.add_wait(stream, node.event, node.value, bound);
      break;
    case NodeKind::kRecord:
      wait_for_.add_record(stream, node.event, node.value);  // may throw DeadlockError
      events_[node.event] = node.value;
      break;
  }
  issue(std::move(node));
  legacy_epilogue(stream);
}

void Executor::launch(StreamId stream, Op op) {
  check_stream(stream);
  if (op.duration_ms < 0) throw std::invalid_argument("an op cannot have a negative duration");
  submit(Node{NodeKind::kOp, stream, std::move(op), 0, 0});
}

void Executor::record(EventId event, StreamId stream) {
  check_event(event);
  check_stream(stream);
  if (capture_) {
    const std::uint64_t rel = ++capture_->counted[event];
    submit(Node{NodeKind::kRecord, stream, {}, event, rel});
    return;
  }
  submit(Node{NodeKind::kRecord, stream, {}, event, events_[event] + 1});
}

void Executor::wait(StreamId stream, EventId event) {
  check_event(event);
  check_stream(stream);
  if (capture_) {
    const std::uint64_t rel = capture_->counted[event];
    if (rel == 0) {
      if (events_[event] == 0) return;  // never recorded: CUDA makes this a no-op
      throw CaptureError(
          fmt::format("stream {} waits for event {}, last recorded outside the capture: a graph "
                      "cannot depend on work outside it",
                      stream, event));
    }
    submit(Node{NodeKind::kWait, stream, {}, event, rel});
    return;
  }
  const std::uint64_t value = events_[event];
  if (value == 0) return;
  submit(Node{NodeKind::kWait, stream, {}, event, value});
}

void Executor::wait_value(StreamId stream, EventId event, std::uint64_t value) {
  check_event(event);
  check_stream(stream);
  if (capture_)
    throw CaptureError(
        "wait_value() cannot be captured: it may wait for a record outside the graph");
  if (value == 0) return;
  submit(Node{NodeKind::kWait, stream, {}, event, value}, value <= events_[event]);
}

void Executor::synchronize() {
  if (capture_)
    throw CaptureError(
        "synchronize() during capture: a graph cannot contain a host synchronisation");
  if (wait_for_.pending_waits() > 0) {
    throw std::runtime_error("synchronize() would wait forever: " + wait_for_.describe_pending());
  }
  drain();
}

bool Executor::query(EventId event) {
  check_event(event);
  if (capture_) {
    throw CaptureError(
        "query() during capture: a data-dependent host decision cannot be frozen into a graph");
  }
  return events_[event] == 0 || fired(event, events_[event]);
}

void Executor::begin_capture() {
  if (capture_) throw CaptureError("begin_capture() while already capturing");
  capture_ = std::make_unique<Capture>();
  capture_->counted.assign(events_.size(), 0);
}

Graph Executor::end_capture() {
  if (!capture_) throw CaptureError("end_capture() without begin_capture()");
  Graph g;
  std::vector<bool> touched(streams_.size(), false);
  for (const Node& n : capture_->nodes) touched[n.stream] = true;
  for (StreamId s = 0; s < touched.size(); ++s) {
    if (touched[s]) g.streams_.push_back(s);
  }
  for (EventId e = 0; e < capture_->counted.size(); ++e) {
    if (capture_->counted[e] > 0) g.records_.emplace_back(e, capture_->counted[e]);
  }
  // Group by stream, keeping each stream's order: across streams only the
  // events order work (and their values are already fixed relative to the
  // capture), so a launch can queue each stream's nodes under one lock.
  std::stable_sort(capture_->nodes.begin(), capture_->nodes.end(),
                   [](const Node& a, const Node& b) { return a.stream < b.stream; });
  g.nodes_ = std::make_shared<const std::vector<Node>>(std::move(capture_->nodes));
  capture_.reset();
  return g;
}

void Executor::launch_graph(const Graph& graph) {
  if (capture_) throw CaptureError("launch_graph() during capture is not supported");
  if (!graph.nodes_) return;
  if (wait_for_.pending_waits() > 0) {
    throw CaptureError("launch_graph() while a wait on an unrecorded value is pending: " +
                       wait_for_.describe_pending());
  }
  for (const StreamId s : graph.streams_) legacy_prelude(s);
  // Rebase the graph's relative event values onto this launch.
  const std::vector<Node>& nodes = *graph.nodes_;
  graph_values_.resize(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    graph_values_[i] =
        nodes[i].kind == NodeKind::kOp ? 0 : events_[nodes[i].event] + nodes[i].value;
  }
  for (const auto& [event, count] : graph.records_) events_[event] += count;
  issue_graph(graph.nodes_, graph_values_);
}

}  // namespace streams
