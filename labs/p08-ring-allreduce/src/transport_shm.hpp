// The shared-memory half of a Transport, private to the transport's sources
// (transport.cpp sets it up, exchange() and relay() move bytes through it).
#pragma once

#include <chrono>
#include <vector>

#include "ring_allreduce/shm_channel.hpp"
#include "ring_allreduce/transport.hpp"

namespace ring {

struct Transport::Shm {
  ShmSegment mine;               // rings into this rank, and its doorbell
  std::vector<ShmSegment> peer;  // [p]: rank p's segment, mapped when p shares memory with us
  std::chrono::microseconds spin{0};
};

}  // namespace ring
