// Limits every gRPC server of this lab runs with (the plugin's DevicePlugin
// servers and the mock kubelet's Registration server), so that a hostile or
// broken client on the socket cannot take the node's plugin down:
//  - a request larger than max_receive_bytes is refused (RESOURCE_EXHAUSTED)
//    before it is parsed; a kubelet's Allocate for a whole node is a few KiB;
//  - streams per connection and handler threads per server are bounded: each
//    ListAndWatch holds a thread for its lifetime, and a client that opens
//    thousands gets RESOURCE_EXHAUSTED instead of a thread each; the memory
//    quota bounds what many connections can hold between them;
//  - timeouts from accept: a connection that has not finished its HTTP/2
//    handshake within handshake_timeout is closed, one with no call in flight
//    for idle_timeout too, and keepalive pings find dead peers of a stream.
// gRPC 1.51 (Debian 12) has no cap on the number of incoming connections
// (grpc.max_allowed_incoming_connections came later): the handshake and idle
// timeouts, the memory quota and the socket directory's permissions (root only
// under /var/lib/kubelet) bound them instead.
#pragma once

#include <chrono>
#include <cstddef>

namespace grpc {
class ServerBuilder;
}

namespace device_plugin {

struct ServerLimits {
  int max_receive_bytes = 256 * 1024;
  int max_concurrent_streams = 16;  // per connection: the kubelet's ListAndWatch and a few calls
  int max_threads = 64;             // per server, pollers included
  std::size_t memory_bytes = 64u << 20;
  std::chrono::milliseconds handshake_timeout{5000};
  std::chrono::milliseconds idle_timeout{5 * 60 * 1000};
  std::chrono::milliseconds keepalive_time{30 * 1000};
  std::chrono::milliseconds keepalive_timeout{10 * 1000};
};

// Sets `limits` on `builder`, before BuildAndStart.
void apply_server_limits(grpc::ServerBuilder& builder, const ServerLimits& limits);

}  // namespace device_plugin
