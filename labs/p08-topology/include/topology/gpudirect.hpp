// GPUDirect RDMA lets the NIC read and write GPU memory directly. When it is
// off (driver/module missing, PCIe topology without peer-to-peer, ACS on),
// every cross-node byte is staged through host memory: GPU -> host over PCIe,
// host -> NIC -> wire, host -> GPU over PCIe on the other side.
#pragma once

#include "topology/cluster.hpp"

namespace topo {

// The effective link between nodes with GPUDirect off: the three legs are
// store-and-forward (no overlap), so their times per byte add up, and each
// transfer pays the latency of all three. This is the pessimistic bound; a
// runtime that pipelines the staging gets closer to min(PCIe, IB).
Link host_bounce_link(const Cluster& c);

// The cluster as it behaves with GPUDirect RDMA off (cross-node link replaced).
Cluster without_gpudirect(const Cluster& c);

}  // namespace topo
