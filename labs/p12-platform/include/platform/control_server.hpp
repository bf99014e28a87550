// The control plane's HTTP+JSON API (api/openapi.yaml describes it) over a
// ControlPlane. Users: /v1/jobs, /v1/nodes, /v1/licence, /metrics. Agents:
// /v1/nodes/register, /v1/nodes/{name}/heartbeat, /v1/tasks/{id}/status.
// Tasks: /v1/jobs/{id}/rendezvous.
#pragma once

#include <string_view>

#include "platform/control_plane.hpp"
#include "platform/http_service.hpp"

namespace platform {

// Adds every route to `http`; `cp` must outlive it.
void add_control_routes(HttpService& http, ControlPlane& cp);

// Agent messages <-> JSON (shared with the agent, so both ends agree).
gpulab::Json node_to_register_json(const Node& n);
Node node_from_register_json(const gpulab::Json& j);  // throws ApiError(400)
gpulab::Json heartbeat_to_json(const Heartbeat& hb);
// `protocol`: the one the node registered with (ControlPlane::node_protocol).
Heartbeat heartbeat_from_json(const std::string& node, const gpulab::Json& j, int protocol = kProtocolVersion);
gpulab::Json report_to_json(const TaskReport& r);
TaskReport report_from_json(const gpulab::Json& j);
gpulab::Json assignment_to_json(const Assignment& a);

Assignment assignment_from_json(const gpulab::Json& j);

}  // namespace platform
