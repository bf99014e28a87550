// A captured sequence of issued work (mini CUDA Graphs): ops, records and
// waits with their streams, frozen at capture and replayed with one call.
// Event values are stored relative to the capture ("the k-th record of event
// e inside this graph") and rebased at every launch.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "streams/op.hpp"

namespace streams {

enum class NodeKind : std::uint8_t { kOp, kRecord, kWait };

struct Node {
  NodeKind kind = NodeKind::kOp;
  StreamId stream = 0;
  Op op;                    // kOp
  EventId event = 0;        // kRecord, kWait
  std::uint64_t value = 0;  // absolute when issued; relative inside a Graph
};

class Graph {
 public:
  [[nodiscard]] std::size_t size() const { return nodes_ ? nodes_->size() : 0; }
  [[nodiscard]] std::size_t ops() const;
  [[nodiscard]] bool empty() const { return size() == 0; }

 private:
  friend class Executor;
  std::shared_ptr<const std::vector<Node>> nodes_;
  std::vector<StreamId> streams_;                           // every stream the graph touches
  std::vector<std::pair<EventId, std::uint64_t>> records_;  // records per event in the graph
};

}  // namespace streams
