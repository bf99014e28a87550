// The seam every metric source sits behind: NVML, the P04 fakegpu device, the
// labs' textfiles and the simulated GPUs each add their families to one
// exposition and say whether they could (and why not).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/inventory/node_inventory.hpp"
#include "gpulab/prom_text.hpp"

namespace exporter {

struct Availability {
  bool up = false;
  std::string reason;  // why not, when !up ("" when up)
  // Things worth a log line even though the source is up (a skipped file).
  std::vector<std::string> warnings;
};
inline Availability available() {
  return {true, "", {}};
}
inline Availability unavailable(std::string reason) {
  return {false, std::move(reason), {}};
}

class Source {
 public:
  virtual ~Source() = default;
  // "nvml", "fakegpu", "textfile", "simulated": the value of
  // gpu_exporter_source_up{source="..."}.
  [[nodiscard]] virtual std::string_view name() const = 0;
  // Adds this source's families to `out`. Never throws for a missing device or
  // file: it returns {false, reason} and adds nothing it could not read.
  virtual Availability collect(gpulab::prom::Exposition& out) = 0;
};

// One GPU as the GPU-shaped sources (NVML, simulated) see it. A field NVML
// reports as not supported on a board stays empty and its series is left out.
struct GpuSample {
  // Who it is, as the shared inventory describes it: index, id = the UUID,
  // model = NVML's name (the gpu, uuid and model_name labels), memory, and
  // health, which follows the Xids below (health_after_xids).
  gpulab::inventory::Accelerator device;
  std::optional<double> utilization_ratio;  // 0..1
  std::optional<double> memory_used_bytes;
  std::optional<double> memory_free_bytes;
  std::optional<double> temperature_celsius;
  std::optional<double> power_watts;
  std::optional<double> energy_joules;  // since driver load (a counter)
  std::optional<double> sm_clock_hertz;
  std::optional<double> pcie_tx_bytes_per_second;
  std::optional<double> pcie_rx_bytes_per_second;
  std::optional<double> ecc_single_bit;  // counters
  std::optional<double> ecc_double_bit;
  std::map<unsigned, double> xid_counts;  // xid code -> events seen
  std::optional<unsigned> last_xid;
  std::optional<bool> throttled_thermal;
  std::optional<bool> throttled_power;
};

// Healthy until an Xid that is not an application's own fault; the reason is
// the latest such Xid when it is the last one seen, else the lowest code.
gpulab::inventory::Health health_after_xids(const std::map<unsigned, double>& xid_counts,
                                            std::optional<unsigned> last_xid);

// The GPUs a source sampled, as the node inventory a platform agent sends.
gpulab::inventory::NodeInventory node_inventory(std::string node,
                                                const std::vector<GpuSample>& gpus);

// The contract names (gpu_utilization_ratio, gpu_memory_used_bytes, ...) with
// labels gpu, uuid, model_name; with `dcgm_compat` also dcgm-exporter's
// DCGM_FI_DEV_* families in dcgm-exporter's units and labels
// (gpu, UUID, device="nvidiaN", modelName).
void add_gpu_metrics(const std::vector<GpuSample>& gpus, bool dcgm_compat,
                     gpulab::prom::Exposition& out);

}  // namespace exporter
