#include "streams/thread_executor.hpp"

#include <chrono>

namespace streams {

ThreadExecutor::ThreadExecutor(DefaultStream mode) : Executor(mode) {
  start();
}

ThreadExecutor::~ThreadExecutor() {
  // A wait for a value nobody recorded (left behind by a rejected circular
  // wait) would block its worker forever: release every such wait first.
  for (EventId e = 0; e < events_.size(); ++e) {
    EventState& ev = *events_[e];
    {
      std::lock_guard lock(ev.m);
      ev.give_up_above = issued_records(e);
    }
    ev.cv.notify_all();
  }
  // Drain, then join: each worker finishes its queue before it sees `stop`.
  for (auto& s : streams_) {
    {
      std::lock_guard lock(s->m);
      s->stop = true;
    }
    s->cv.notify_one();
  }
  for (auto& s : streams_) s->worker.join();
}

double ThreadExecutor::now_ms() const {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - epoch_)
      .count();
}

void ThreadExecutor::backend_add_stream(StreamId id, const StreamOptions& options) {
  auto s = std::make_unique<StreamState>();
  s->id = id;
  s->priority = options.priority;
  s->engine = options.engine ? engines_.at(*options.engine).get() : nullptr;
  StreamState& ref = *s;
  streams_.push_back(std::move(s));
  ref.worker = std::thread([this, &ref] { worker_loop(ref); });
}

void ThreadExecutor::backend_add_event(EventId) {
  events_.push_back(std::make_unique<EventState>());
}

void ThreadExecutor::backend_add_engine(EngineId, int slots) {
  engines_.push_back(std::make_unique<EngineState>(slots));
}

void ThreadExecutor::issue(Node&& node) {
  Item item;
  item.value = node.value;
  if (node.kind != NodeKind::kOp) item.event = events_[node.event].get();
  StreamState& s = *streams_[node.stream];
  item.owned = std::make_unique<Node>(std::move(node));
  item.node = item.owned.get();
  {
    std::lock_guard lock(s.m);
    s.queue.push_back(std::move(item));
    ++s.issued;
  }
  s.cv.notify_one();
}

void ThreadExecutor::issue_graph(const std::shared_ptr<const std::vector<Node>>& nodes,
                                 std::span<const std::uint64_t> values) {
  live_graphs_.push_back(nodes);
  // Graph nodes are grouped by stream (end_capture), so this takes one lock
  // and makes one wake-up per stream instead of per node, and allocates
  // nothing: where a replayed graph saves its issue cost.
  const std::vector<Node>& ns = *nodes;
  std::size_t i = 0;
  while (i < ns.size()) {
    StreamState& s = *streams_[ns[i].stream];
    std::size_t j = i;
    {
      std::lock_guard lock(s.m);
      for (; j < ns.size() && ns[j].stream == ns[i].stream; ++j) {
        Item item;
        item.node = &ns[j];
        item.value = values[j];
        if (ns[j].kind != NodeKind::kOp) item.event = events_[ns[j].event].get();
        s.queue.push_back(std::move(item));
      }
      s.issued += j - i;
    }
    s.cv.notify_one();
    i = j;
  }
}

void ThreadExecutor::drain() {
  for (auto& s : streams_) {
    std::unique_lock lock(s->m);
    s->idle_cv.wait(lock, [&] { return s->completed == s->issued; });
  }
  live_graphs_.clear();
  std::exception_ptr err;
  {
    std::lock_guard lock(error_m_);
    err = std::exchange(first_error_, nullptr);
  }
  if (err) std::rethrow_exception(err);
}

bool ThreadExecutor::fired(EventId event, std::uint64_t value) {
  EventState& ev = *events_[event];
  std::lock_guard lock(ev.m);
  return ev.value >= value;
}

void ThreadExecutor::worker_loop(StreamState& s) {
  while (true) {
    const Item* item = nullptr;
    {
      std::unique_lock lock(s.m);
      s.cv.wait(lock, [&] { return s.stop || !s.queue.empty(); });
      if (s.queue.empty()) return;  // stop requested and drained
      item = &s.queue.front();      // stays queued while it runs: the host only appends
    }
    execute(s, *item);
    {
      std::lock_guard lock(s.m);
      s.queue.pop_front();
      ++s.completed;
    }
    s.idle_cv.notify_all();
  }
}

void ThreadExecutor::EngineState::acquire(int priority) {
  std::unique_lock lock(m);
  const std::pair<int, std::uint64_t> ticket{priority, next_ticket++};
  waiting.insert(ticket);
  cv.wait(lock, [&] { return free_slots > 0 && *waiting.begin() == ticket; });
  waiting.erase(waiting.begin());
  --free_slots;
  if (free_slots > 0) cv.notify_all();  // the next in line may also fit
}

void ThreadExecutor::EngineState::release() {
  {
    std::lock_guard lock(m);
    ++free_slots;
  }
  cv.notify_all();
}

void ThreadExecutor::execute(StreamState& s, const Item& item) {
  const Node& node = *item.node;
  switch (node.kind) {
    case NodeKind::kRecord: {
      {
        std::lock_guard lock(item.event->m);
        if (item.value > item.event->value) item.event->value = item.value;
      }
      item.event->cv.notify_all();
      return;
    }
    case NodeKind::kWait: {
      EventState& ev = *item.event;
      std::unique_lock lock(ev.m);
      const auto ready = [&] { return ev.value >= item.value || item.value > ev.give_up_above; };
      if (!ready()) {
        if (observer_) {
          lock.unlock();
          observer_(s.id);
          lock.lock();
        }
        ev.cv.wait(lock, ready);
      }
      return;
    }
    case NodeKind::kOp: {
      if (s.engine != nullptr) s.engine->acquire(s.priority);
      const auto until = std::chrono::steady_clock::now() +
                         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double, std::milli>(node.op.duration_ms));
      try {
        if (node.op.fn) node.op.fn();
      } catch (...) {
        std::lock_guard lock(error_m_);
        if (!first_error_) first_error_ = std::current_exception();
      }
      std::this_thread::sleep_until(until);
      if (s.engine != nullptr) s.engine->release();
      return;
    }
  }
}

}  // namespace streams
