#include "streams/virtual_executor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace streams {

VirtualExecutor::VirtualExecutor(DefaultStream mode) : Executor(mode) {
  start();
}

void VirtualExecutor::backend_add_stream(StreamId, const StreamOptions& options) {
  VStream s;
  s.options = options;
  vstreams_.push_back(std::move(s));
}

void VirtualExecutor::backend_add_event(EventId) {
  values_.push_back(0);
}

void VirtualExecutor::backend_add_engine(EngineId, int slots) {
  vengines_.push_back(VEngine{slots});
}

void VirtualExecutor::issue(Node&& node) {
  vstreams_[node.stream].queue.push_back(std::move(node));
}

void VirtualExecutor::issue_graph(const std::shared_ptr<const std::vector<Node>>& nodes,
                                  std::span<const std::uint64_t> values) {
  for (std::size_t i = 0; i < nodes->size(); ++i) {
    Node n = (*nodes)[i];
    n.value = values[i];
    vstreams_[n.stream].queue.push_back(std::move(n));
  }
}

bool VirtualExecutor::fired(EventId event, std::uint64_t value) {
  return values_[event] >= value;
}

void VirtualExecutor::start_op(StreamId id) {
  VStream& s = vstreams_[id];
  Node node = std::move(s.queue.front());
  s.queue.pop_front();
  s.running = true;
  s.wants_engine = false;
  s.busy_until = now_ + node.op.duration_ms;
  timeline_.push_back(Span{id, node.op.name, now_, s.busy_until});
  if (node.op.fn) node.op.fn();
}

// Runs the stream's head nodes that can run at `now_`. Returns whether anything changed.
bool VirtualExecutor::advance_stream(StreamId id) {
  VStream& s = vstreams_[id];
  bool changed = false;
  while (!s.running && !s.wants_engine && !s.queue.empty()) {
    Node& head = s.queue.front();
    if (head.kind == NodeKind::kRecord) {
      values_[head.event] = std::max(values_[head.event], head.value);
    } else if (head.kind == NodeKind::kWait) {
      if (values_[head.event] < head.value) break;
    } else if (s.options.engine) {
      s.wants_engine = true;  // granted in drain(), by priority
      s.ticket = next_ticket_++;
      return true;
    } else {
      start_op(id);
      return true;
    }
    s.queue.pop_front();
    changed = true;
  }
  return changed;
}

void VirtualExecutor::drain() {
  while (true) {
    // Settle everything that can happen at now_: records, satisfied waits,
    // op starts, engine grants (which may in turn unblock nothing until time passes).
    bool changed = true;
    while (changed) {
      changed = false;
      for (StreamId id = 0; id < vstreams_.size(); ++id) changed |= advance_stream(id);
      for (EngineId e = 0; e < vengines_.size(); ++e) {
        while (vengines_[e].free_slots > 0) {
          StreamId best = 0;
          bool found = false;
          for (StreamId id = 0; id < vstreams_.size(); ++id) {
            const VStream& s = vstreams_[id];
            if (!s.wants_engine || s.options.engine != e) continue;
            const VStream& b = vstreams_[best];
            if (!found || s.options.priority < b.options.priority ||
                (s.options.priority == b.options.priority && s.ticket < b.ticket)) {
              best = id;
              found = true;
            }
          }
          if (!found) break;
          --vengines_[e].free_slots;
          start_op(best);
          changed = true;
        }
      }
    }
    // Advance time to the next op completion.
    double next = std::numeric_limits<double>::infinity();
    for (const VStream& s : vstreams_) {
      if (s.running) next = std::min(next, s.busy_until);
    }
    if (next == std::numeric_limits<double>::infinity()) break;
    now_ = next;
    for (VStream& s : vstreams_) {
      if (s.running && s.busy_until <= now_) {
        s.running = false;
        if (s.options.engine) ++vengines_[*s.options.engine].free_slots;
      }
    }
  }
  for (StreamId id = 0; id < vstreams_.size(); ++id) {
    if (!vstreams_[id].queue.empty()) {
      // The issue-time detector makes this unreachable; never hang if it is not.
      throw std::runtime_error(fmt::format("virtual executor: stream {} is blocked forever", id));
    }
  }
}

}  // namespace streams
