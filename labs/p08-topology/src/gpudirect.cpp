#include "topology/gpudirect.hpp"

namespace topo {

Link host_bounce_link(const Cluster& c) {
  const double seconds_per_byte = 2.0 / c.pcie.bandwidth + 1.0 / c.infiniband.bandwidth;
  return {"IB via host", 1.0 / seconds_per_byte, 2.0 * c.pcie.latency + c.infiniband.latency};
}

Cluster without_gpudirect(const Cluster& c) {
  Cluster off = c;
  off.infiniband = host_bounce_link(c);
  off.gpudirect_rdma = false;
  return off;
}

}  // namespace topo
