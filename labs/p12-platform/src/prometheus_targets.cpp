#include "platform/prometheus_targets.hpp"

namespace platform {

using gpulab::Json;

std::string host_port_of(const std::string& url) {
  std::string out = url;
  if (const auto scheme = out.find("://"); scheme != std::string::npos)
    out = out.substr(scheme + 3);
  if (const auto slash = out.find('/'); slash != std::string::npos) out.resize(slash);
  return out;
}

Json prometheus_targets(const std::vector<Node>& nodes, const std::vector<Job>& jobs) {
  Json out = Json::array();
  for (const auto& n : nodes) {
    if (n.state == NodeState::kLost || n.address.empty()) continue;
    out.push_back(Json{{"targets", Json::array({host_port_of(n.address)})},
                       {"labels", Json{{"job", "gpulabd-agent"}, {"node", n.name}}}});
  }
  for (const auto& j : jobs) {
    if (j.spec.kind != JobKind::kServe || j.state != JobState::kRunning || j.endpoint.empty() ||
        j.placement.empty()) {
      continue;
    }
    const Slot& slot = j.placement.front();
    out.push_back(Json{{"targets", Json::array({host_port_of(j.endpoint)})},
                       {"labels", Json{{"job", "gpulab-serve"},
                                       {"gpulab_job", j.id},
                                       {"gpulab_job_name", j.spec.name},
                                       {"node", slot.node},
                                       {"device", slot.device},
                                       {"model", j.spec.serve.model}}}});
  }
  return out;
}

}  // namespace platform
