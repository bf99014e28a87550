// A relay: a rank streams a sequence of messages to its right neighbour while
// it receives the same number of messages from its left, and outgoing message
// i+1 may be made of incoming message i (reduced with local data, or copied).
// Transport::relay() moves the bytes; a RelayPlan says what they are. The
// ring all-reduce is one relay (ring_pipeline.hpp): NCCL's recvReduceSend and
// recvCopySend, where a received slice is added to the local one and written
// straight into the outgoing ring, or copied to the output and forwarded, in
// one pass over memory.
//
// Every message lies in local memory as a whole (out_bytes), so a piece that
// cannot be forwarded at once is landed there (land) and sent from there
// later; forward() is the fast path that does both in one pass when the
// outgoing ring has room at exactly that offset.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace ring {

class RelayPlan {
 public:
  virtual ~RelayPlan() = default;

  // Messages each way (message i out and in are step i of the schedule).
  [[nodiscard]] virtual std::size_t messages() const = 0;
  // Outgoing message i in local memory. Its bytes are ready from the start
  // unless derived(i); then the first k are ready once the first k bytes of
  // incoming message i-1 are landed (or were forwarded).
  [[nodiscard]] virtual std::span<const std::byte> out_bytes(std::size_t i) const = 0;
  [[nodiscard]] virtual bool derived(std::size_t i) const = 0;
  // Size of incoming message i (equal to out_bytes(i+1).size() when derived(i+1)).
  [[nodiscard]] virtual std::size_t in_size(std::size_t i) const = 0;
  // Where incoming message i may be received as is (a copy into place), so a
  // socket can read straight into it; empty when it must be reduced.
  [[nodiscard]] virtual std::span<std::byte> in_place(std::size_t i) const = 0;
  // Incoming bytes [offset, offset + wire.size()) of message i, whole
  // elements: reduce or copy them into local memory.
  virtual void land(std::size_t i, std::size_t offset, std::span<const std::byte> wire) = 0;
  // The same bytes when outgoing message i+1 is derived from them: land what
  // must stay local and write outgoing message i+1's bytes at `offset` into
  // `out` (as many as `wire`), in one pass.
  virtual void forward(std::size_t i, std::size_t offset, std::span<const std::byte> wire,
                       std::span<std::byte> out) = 0;
  // Called once per message, in order, before any byte of message i moves
  // either way (the failure demo's step hook).
  virtual void begin(std::size_t i) = 0;
  // Names message i in the watchdog's error ("reduce-scatter step 2").
  [[nodiscard]] virtual std::string describe(std::size_t i) const = 0;
};

}  // namespace ring
