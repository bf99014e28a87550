#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "exporter/source.hpp"

namespace exporter {

namespace prom = gpulab::prom;

namespace {

prom::Labels gpu_labels(const GpuSample& g) {
  return {{"gpu", fmt::format("{}", g.device.index)},
          {"uuid", g.device.id},
          {"model_name", g.device.model}};
}

prom::Labels dcgm_labels(const GpuSample& g) {
  return {{"gpu", fmt::format("{}", g.device.index)},
          {"UUID", g.device.id},
          {"device", fmt::format("nvidia{}", g.device.index)},
          {"modelName", g.device.model}};
}

// One family from one optional field: created only if some GPU has the field.
template <class Get>
void emit(const std::vector<GpuSample>& gpus, prom::Exposition& out, const std::string& name,
          const std::string& help, prom::MetricType type, Get get, bool dcgm) {
  prom::Family* f = nullptr;
  for (const auto& g : gpus) {
    const std::optional<double> v = get(g);
    if (!v) continue;
    if (f == nullptr) f = &out.family(name, help, type);
    f->set(dcgm ? dcgm_labels(g) : gpu_labels(g), *v);
  }
}

}  // namespace

gpulab::inventory::Health health_after_xids(const std::map<unsigned, double>& xid_counts,
                                            std::optional<unsigned> last_xid) {
  namespace inv = gpulab::inventory;
  if (last_xid && inv::xid_marks_unhealthy(*last_xid))
    return inv::Health::unhealthy(inv::xid_reason(*last_xid));
  for (const auto& [code, count] : xid_counts) {
    if (count > 0 && inv::xid_marks_unhealthy(code))
      return inv::Health::unhealthy(inv::xid_reason(code));
  }
  return inv::Health::ok();
}

gpulab::inventory::NodeInventory node_inventory(std::string node,
                                                const std::vector<GpuSample>& gpus) {
  gpulab::inventory::NodeInventory out;
  out.node = std::move(node);
  for (const GpuSample& g : gpus) out.accelerators.push_back(g.device);
  return out;
}

void add_gpu_metrics(const std::vector<GpuSample>& gpus, bool dcgm_compat, prom::Exposition& out) {
  using T = prom::MetricType;
  emit(
      gpus, out, "gpu_utilization_ratio", "Fraction of the last sample period a kernel ran (0..1).",
      T::kGauge, [](const GpuSample& g) { return g.utilization_ratio; }, false);
  emit(
      gpus, out, "gpu_memory_used_bytes", "Device memory in use.", T::kGauge,
      [](const GpuSample& g) { return g.memory_used_bytes; }, false);
  emit(
      gpus, out, "gpu_memory_free_bytes", "Device memory free.", T::kGauge,
      [](const GpuSample& g) { return g.memory_free_bytes; }, false);
  emit(
      gpus, out, "gpu_temperature_celsius", "GPU die temperature.", T::kGauge,
      [](const GpuSample& g) { return g.temperature_celsius; }, false);
  emit(
      gpus, out, "gpu_power_watts", "Board power draw.", T::kGauge,
      [](const GpuSample& g) { return g.power_watts; }, false);
  emit(
      gpus, out, "gpu_energy_joules_total", "Energy consumed since the driver loaded.", T::kCounter,
      [](const GpuSample& g) { return g.energy_joules; }, false);
  emit(
      gpus, out, "gpu_sm_clock_hertz", "Current SM clock.", T::kGauge,
      [](const GpuSample& g) { return g.sm_clock_hertz; }, false);
  emit(
      gpus, out, "gpu_pcie_tx_bytes_per_second", "PCIe transmit throughput.", T::kGauge,
      [](const GpuSample& g) { return g.pcie_tx_bytes_per_second; }, false);
  emit(
      gpus, out, "gpu_pcie_rx_bytes_per_second", "PCIe receive throughput.", T::kGauge,
      [](const GpuSample& g) { return g.pcie_rx_bytes_per_second; }, false);

  prom::Family* ecc = nullptr;
  prom::Family* xid = nullptr;
  prom::Family* throttled = nullptr;
  for (const auto& g : gpus) {
    const auto add_ecc = [&](const char* type, const std::optional<double>& v) {
      if (!v) return;
      if (ecc == nullptr) {
        ecc = &out.counter("gpu_ecc_errors_total", "ECC errors since the driver loaded, by type.");
      }
      auto labels = gpu_labels(g);
      labels.emplace_back("type", type);
      ecc->set(labels, *v);
    };
    add_ecc("single_bit", g.ecc_single_bit);
    add_ecc("double_bit", g.ecc_double_bit);
    for (const auto& [code, count] : g.xid_counts) {
      if (xid == nullptr) {
        xid = &out.counter("gpu_xid_errors_total",
                           "Xid events seen by the exporter, by Xid code (a series appears with "
                           "the first event of its code).");
      }
      auto labels = gpu_labels(g);
      labels.emplace_back("xid", fmt::format("{}", code));
      xid->set(labels, count);
    }
    const auto add_throttle = [&](const char* reason, const std::optional<bool>& v) {
      if (!v) return;
      if (throttled == nullptr) {
        throttled = &out.gauge("gpu_throttled", "1 while clocks are held down for this reason.");
      }
      auto labels = gpu_labels(g);
      labels.emplace_back("reason", reason);
      throttled->set(labels, *v ? 1 : 0);
    };
    add_throttle("thermal", g.throttled_thermal);
    add_throttle("power", g.throttled_power);
  }

  if (!dcgm_compat) return;
  // dcgm-exporter's default-counters.csv names, types, units and help texts.
  const auto scaled = [](const std::optional<double>& v, double k) -> std::optional<double> {
    if (!v) return std::nullopt;
    return *v * k;
  };
  const auto floored_mib = [](const std::optional<double>& v) -> std::optional<double> {
    if (!v) return std::nullopt;
    return std::floor(*v / (1 << 20));
  };
  emit(
      gpus, out, "DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", T::kGauge,
      [&](const GpuSample& g) { return scaled(g.sm_clock_hertz, 1e-6); }, true);
  emit(
      gpus, out, "DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", T::kGauge,
      [](const GpuSample& g) { return g.temperature_celsius; }, true);
  emit(
      gpus, out, "DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", T::kGauge,
      [](const GpuSample& g) { return g.power_watts; }, true);
  emit(
      gpus, out, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
      "Total energy consumption since boot (in mJ).", T::kCounter,
      [&](const GpuSample& g) { return scaled(g.energy_joules, 1e3); }, true);
  emit(
      gpus, out, "DCGM_FI_DEV_PCIE_TX_THROUGHPUT",
      "Total number of bytes transmitted through PCIe TX (in KB) via NVML.", T::kCounter,
      [&](const GpuSample& g) { return scaled(g.pcie_tx_bytes_per_second, 1e-3); }, true);
  emit(
      gpus, out, "DCGM_FI_DEV_PCIE_RX_THROUGHPUT",
      "Total number of bytes received through PCIe RX (in KB) via NVML.", T::kCounter,
      [&](const GpuSample& g) { return scaled(g.pcie_rx_bytes_per_second, 1e-3); }, true);
  emit(
      gpus, out, "DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", T::kGauge,
      [&](const GpuSample& g) { return scaled(g.utilization_ratio, 100); }, true);
  emit(
      gpus, out, "DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", T::kGauge,
      [&](const GpuSample& g) { return floored_mib(g.memory_used_bytes); }, true);
  emit(
      gpus, out, "DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", T::kGauge,
      [&](const GpuSample& g) { return floored_mib(g.memory_free_bytes); }, true);
  emit(
      gpus, out, "DCGM_FI_DEV_XID_ERRORS", "Value of the last XID error encountered.", T::kGauge,
      [](const GpuSample& g) -> std::optional<double> {
        return static_cast<double>(g.last_xid.value_or(0));
      },
      true);
}

}  // namespace exporter
