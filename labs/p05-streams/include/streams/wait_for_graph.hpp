// Issue-time deadlock detection. Nodes are issued operations; edges are
// stream order (each op waits for the one before it on its stream) and
// record -> wait bindings. A wait on a value that no record has produced yet
// is "pending"; only when a record binds to a pending wait can a cycle close,
// so that is the only moment a DFS runs. While no wait is pending the graph
// keeps no nodes at all, so the common CUDA-style program pays nothing.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "streams/op.hpp"

namespace streams {

class WaitForGraph {
 public:
  void add_op(StreamId stream);
  // `bound`: the record producing `value` has already been issued.
  void add_wait(StreamId stream, EventId event, std::uint64_t value, bool bound);
  // Throws DeadlockError (and changes nothing) if a pending wait that this
  // record would satisfy is itself ordered before this record.
  void add_record(StreamId stream, EventId event, std::uint64_t value);

  [[nodiscard]] std::size_t pending_waits() const;
  // One pending wait, described for an error message ("stream 1 waits for event 2 value 1").
  [[nodiscard]] std::string describe_pending() const;
  [[nodiscard]] std::size_t nodes() const { return nodes_.size(); }

 private:
  using Key = std::pair<EventId, std::uint64_t>;
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  std::uint32_t new_node(StreamId stream);
  [[nodiscard]] bool reaches(std::uint32_t from, std::uint32_t to) const;
  void prune_if_idle();

  struct Node {
    StreamId stream;
    std::vector<std::uint32_t> succ;
  };
  std::vector<Node> nodes_;
  std::unordered_map<StreamId, std::uint32_t> last_on_stream_;
  std::map<Key, std::vector<std::uint32_t>> pending_;  // waits for records not issued yet
  std::map<Key, std::uint32_t> recorded_;              // records issued while the graph is live
};

}  // namespace streams
