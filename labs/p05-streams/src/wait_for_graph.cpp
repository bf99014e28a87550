#include "streams/wait_for_graph.hpp"

#include <fmt/format.h>

namespace streams {

std::uint32_t WaitForGraph::new_node(StreamId stream) {
  const auto id = static_cast<std::uint32_t>(nodes_.size());
  nodes_.push_back(Node{stream, {}});
  if (const auto it = last_on_stream_.find(stream); it != last_on_stream_.end()) {
    nodes_[it->second].succ.push_back(id);  // stream order
  }
  last_on_stream_[stream] = id;
  return id;
}

void WaitForGraph::add_op(StreamId stream) {
  if (pending_.empty()) return;
  new_node(stream);
}

void WaitForGraph::add_wait(StreamId stream, EventId event, std::uint64_t value, bool bound) {
  if (bound && pending_.empty()) return;  // an edge into a new node cannot close a cycle
  const std::uint32_t w = new_node(stream);
  if (bound) {
    if (const auto it = recorded_.find({event, value}); it != recorded_.end())
      nodes_[it->second].succ.push_back(w);
  } else {
    pending_[{event, value}].push_back(w);
  }
}

void WaitForGraph::add_record(StreamId stream, EventId event, std::uint64_t value) {
  if (pending_.empty()) return;
  const auto waiting = pending_.find({event, value});
  if (waiting != pending_.end()) {
    const auto last = last_on_stream_.find(stream);
    if (last != last_on_stream_.end()) {
      for (const std::uint32_t w : waiting->second) {
        if (reaches(w, last->second)) {
          throw DeadlockError(
              fmt::format("circular wait: recording event {} (value {}) on stream {} would release "
                          "a wait on stream {} "
                          "that this record is itself ordered behind",
                          event, value, stream, nodes_[w].stream));
        }
      }
    }
  }
  const std::uint32_t r = new_node(stream);
  recorded_[{event, value}] = r;
  if (waiting != pending_.end()) {
    for (const std::uint32_t w : waiting->second) nodes_[r].succ.push_back(w);
    pending_.erase(waiting);
  }
  prune_if_idle();
}

bool WaitForGraph::reaches(std::uint32_t from, std::uint32_t to) const {
  std::vector<bool> seen(nodes_.size(), false);
  std::vector<std::uint32_t> stack{from};
  while (!stack.empty()) {
    const std::uint32_t n = stack.back();
    stack.pop_back();
    if (n == to) return true;
    if (seen[n]) continue;
    seen[n] = true;
    for (const std::uint32_t s : nodes_[n].succ) stack.push_back(s);
  }
  return false;
}

void WaitForGraph::prune_if_idle() {
  // With nothing pending, no future record can bind backwards into this
  // history, so none of it can be part of a future cycle.
  if (!pending_.empty()) return;
  nodes_.clear();
  last_on_stream_.clear();
  recorded_.clear();
}

std::size_t WaitForGraph::pending_waits() const {
  std::size_t n = 0;
  for (const auto& [key, waits] : pending_) n += waits.size();
  return n;
}

std::string WaitForGraph::describe_pending() const {
  if (pending_.empty()) return "nothing";
  const auto& [key, waits] = *pending_.begin();
  return fmt::format("stream {} waits for event {} value {}, which nothing has recorded",
                     nodes_[waits.front()].stream, key.first, key.second);
}

}  // namespace streams
