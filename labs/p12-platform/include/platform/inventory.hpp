// What an agent offers: its devices, from --devices or from the HAL backends
// that load here, described as the shared inventory's accelerators, each
// certified (or not) by a conformance run at start — a backend that
// hal-conformance did not pass for F32 matmul is not offered for F32 jobs (the
// scheduler reads Device::dtypes).
//
// Topology: the HAL reports none, so an agent declares it. Each device is in
// an NVLink island: its node by default (domain.island ""), or a named one
// ("--devices fast:2@island-a"; a name shared by devices of several nodes is
// one island across them, as in a GB200 NVL72 rack). Devices of a node are
// linked pairwise — NVLink inside an island, PCIe through the host between
// islands — and each has a PCIe link to the host and an Ethernet rail to the
// network. The figures are nominal (the curriculum's cluster, and 100 GbE);
// an agent on real GPUs would read NVML's topology instead.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpulab/inventory/node_inventory.hpp"
#include "platform/model.hpp"

namespace platform {

// Nominal links (GB/s per direction, microseconds per hop).
inline constexpr double kIslandLinkGbps = 900, kIslandLinkUs = 2;   // NVLink 4
inline constexpr double kHostLinkGbps = 64, kHostLinkUs = 2;        // PCIe 5 x16
inline constexpr double kNetworkLinkGbps = 12.5, kNetworkLinkUs = 10;  // 100 GbE

// One HAL device as an accelerator: id "<backend>:<backend_ordinal>", index
// `node_ordinal` (its place in the node's list: the device number --inject
// and the exporter use), the vendor the backend implies, and the host's
// memory (the HAL reports no device memory; CPU backends compute in host
// memory). No links: link_devices() adds them once the node's list is whole.
Device hal_device(std::string_view backend, int backend_ordinal, int node_ordinal, std::string island = {});
// The n of "<backend>:<n>" (CUDA_VISIBLE_DEVICES for a cuda device).
int backend_ordinal(const Device& d);
// What the agent of `node` reports, as the shared inventory: its devices
// without what only the platform keeps (the certified dtypes). The file
// `gpulabd agent --inventory-out` writes, and P06's `gpu-device-plugin
// --inventory` reads.
gpulab::inventory::NodeInventory node_inventory(std::string_view node,
                                                const std::vector<Device>& devices);
// Replaces every device's links with the nominal ones described above.
void link_devices(std::vector<Device>& devices);

// "cpu_ref:2,fast:1" -> cpu_ref:0, cpu_ref:1, fast:0; "fast:2@island-a" puts
// both in island "island-a". Throws gpulab::UsageError naming the bad item.
// "auto" is resolved by discover_devices().
std::vector<Device> parse_device_spec(std::string_view spec);

// One device per HAL backend that loads and can run here (cpu_ref, fast, blas,
// opencl; cuda only with a GPU), its model the backend's own device line.
std::vector<Device> discover_devices();

struct Certification {
  std::string backend;
  bool loaded = false;
  bool certified = false;
  std::string detail;  // "8/8 F32 matmul cases" or why not
};

// Runs conformance's F32 matmul cases on every backend the devices use and
// fills each device's dtypes with "f32" where it passed.
std::vector<Certification> certify(std::vector<Device>& devices);

}  // namespace platform
