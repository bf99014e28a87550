#include "device_plugin/server_limits.hpp"

#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>

#include <string>

namespace device_plugin {

namespace {

int ms(std::chrono::milliseconds d) { return static_cast<int>(d.count()); }

}  // namespace

void apply_server_limits(grpc::ServerBuilder& builder, const ServerLimits& limits) {
  builder.SetMaxReceiveMessageSize(limits.max_receive_bytes);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, limits.max_concurrent_streams);
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, ms(limits.handshake_timeout));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, ms(limits.idle_timeout));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, ms(limits.keepalive_time));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, ms(limits.keepalive_timeout));
  // A client pinging faster than every 10 s without a call is told to go away (GOAWAY).
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 10 * 1000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 2);
  grpc::ResourceQuota quota("device-plugin-server");
  quota.SetMaxThreads(limits.max_threads);
  quota.Resize(limits.memory_bytes);
  builder.SetResourceQuota(quota);
}

}  // namespace device_plugin
