#include "exporter/nvml_source.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <vector>

namespace exporter {

namespace {

// The few NVML types and constants used here, declared as nvml.h does (NVML's
// C ABI is stable; nvml.h itself is not packaged without the CUDA toolkit).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
using nvmlEventSet_t = struct nvmlEventSet_st*;
struct nvmlUtilization_t {
  unsigned gpu;
  unsigned memory;
};
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
struct nvmlEventData_t {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;
  unsigned gpuInstanceId;
  unsigned computeInstanceId;
};
constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kTimeout = 10;
constexpr int kTemperatureGpu = 0;
constexpr int kClockSm = 1;
constexpr int kPcieTx = 0;
constexpr int kPcieRx = 1;
constexpr int kEccCorrected = 0;
constexpr int kEccUncorrected = 1;
constexpr int kEccAggregate = 1;
constexpr unsigned long long kEventXid = 0x8;
constexpr unsigned long long kThrottleSwPowerCap = 0x4;
constexpr unsigned long long kThrottleSwThermal = 0x20;
constexpr unsigned long long kThrottleHwThermal = 0x40;
constexpr unsigned long long kThrottleHwPowerBrake = 0x80;

}  // namespace

struct NvmlSource::Api {
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*count)(unsigned*) = nullptr;
  nvmlReturn_t (*handle_by_index)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*pcie)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*ecc)(nvmlDevice_t, int, int, unsigned long long*) = nullptr;
  nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*event_set_create)(nvmlEventSet_t*) = nullptr;
  nvmlReturn_t (*register_events)(nvmlDevice_t, unsigned long long, nvmlEventSet_t) = nullptr;
  nvmlReturn_t (*event_set_wait)(nvmlEventSet_t, nvmlEventData_t*, unsigned) = nullptr;
  nvmlReturn_t (*event_set_free)(nvmlEventSet_t) = nullptr;
};

NvmlSource::NvmlSource(std::string library, bool dcgm_compat)
    : library_(std::move(library)), dcgm_compat_(dcgm_compat) {}

NvmlSource::~NvmlSource() {
  stop_ = true;
  if (xid_thread_.joinable()) xid_thread_.join();
  if (api_ && event_set_ != nullptr && api_->event_set_free) {
    api_->event_set_free(static_cast<nvmlEventSet_t>(event_set_));
  }
  if (initialised_) api_->shutdown();
  if (handle_ != nullptr) dlclose(handle_);
}

Availability NvmlSource::load() {
  if (handle_ == nullptr) {
    handle_ = dlopen(library_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) {
      const char* e = dlerror();
      return unavailable(e != nullptr ? e : fmt::format("dlopen({}) failed", library_));
    }
  }
  if (!api_) {
    auto api = std::make_unique<Api>();
    std::string missing;
    const auto get = [&](auto& fn, const char* symbol, bool required) {
      void* p = dlsym(handle_, symbol);
      if (p == nullptr && required)
        missing += missing.empty() ? symbol : fmt::format(", {}", symbol);
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
    };
    get(api->init, "nvmlInit_v2", true);
    get(api->shutdown, "nvmlShutdown", true);
    get(api->error_string, "nvmlErrorString", true);
    get(api->count, "nvmlDeviceGetCount_v2", true);
    get(api->handle_by_index, "nvmlDeviceGetHandleByIndex_v2", true);
    get(api->uuid, "nvmlDeviceGetUUID", true);
    get(api->name, "nvmlDeviceGetName", true);
    get(api->utilization, "nvmlDeviceGetUtilizationRates", false);
    get(api->memory, "nvmlDeviceGetMemoryInfo", false);
    get(api->temperature, "nvmlDeviceGetTemperature", false);
    get(api->power, "nvmlDeviceGetPowerUsage", false);
    get(api->energy, "nvmlDeviceGetTotalEnergyConsumption", false);
    get(api->clock, "nvmlDeviceGetClockInfo", false);
    get(api->pcie, "nvmlDeviceGetPcieThroughput", false);
    get(api->ecc, "nvmlDeviceGetTotalEccErrors", false);
    get(api->throttle, "nvmlDeviceGetCurrentClocksThrottleReasons", false);
    get(api->event_set_create, "nvmlEventSetCreate", false);
    get(api->register_events, "nvmlDeviceRegisterEvents", false);
    get(api->event_set_wait, "nvmlEventSetWait_v2", false);
    get(api->event_set_free, "nvmlEventSetFree", false);
    if (!missing.empty()) {
      return unavailable(
          fmt::format("{} loaded but lacks {} (not NVML, or too old a driver)", library_, missing));
    }
    api_ = std::move(api);
  }
  if (!initialised_) {
    const nvmlReturn_t r = api_->init();
    if (r != kSuccess) return unavailable(fmt::format("nvmlInit_v2: {}", api_->error_string(r)));
    initialised_ = true;
    // Xid events: one event set for every GPU that supports them.
    unsigned n = 0;
    nvmlEventSet_t set = nullptr;
    if (api_->event_set_create && api_->register_events && api_->event_set_wait &&
        api_->count(&n) == kSuccess && api_->event_set_create(&set) == kSuccess) {
      event_set_ = set;
      for (unsigned i = 0; i < n; ++i) {
        nvmlDevice_t dev = nullptr;
        if (api_->handle_by_index(i, &dev) == kSuccess) {
          api_->register_events(dev, kEventXid, set);  // NOT_SUPPORTED on some boards: no Xids
        }
      }
      xid_thread_ = std::thread([this] { watch_xids(); });
    }
  }
  return available();
}

void NvmlSource::watch_xids() {
  auto set = static_cast<nvmlEventSet_t>(event_set_);
  while (!stop_) {
    nvmlEventData_t data{};
    const nvmlReturn_t r = api_->event_set_wait(set, &data, 250);
    if (r == kTimeout) continue;
    if (r != kSuccess || data.eventType != kEventXid) continue;
    unsigned count = 0;
    api_->count(&count);
    for (unsigned i = 0; i < count; ++i) {
      nvmlDevice_t dev = nullptr;
      if (api_->handle_by_index(i, &dev) == kSuccess && dev == data.device) {
        const std::lock_guard lock(xid_mutex_);
        const auto code = static_cast<unsigned>(data.eventData);
        xids_[i][code] += 1;
        last_xid_[i] = code;
      }
    }
  }
}

Availability NvmlSource::collect(gpulab::prom::Exposition& out) {
  const Availability a = load();
  if (!a.up) return a;
  unsigned n = 0;
  if (const nvmlReturn_t r = api_->count(&n); r != kSuccess) {
    return unavailable(fmt::format("nvmlDeviceGetCount_v2: {}", api_->error_string(r)));
  }
  std::vector<GpuSample> gpus;
  for (unsigned i = 0; i < n; ++i) {
    nvmlDevice_t dev = nullptr;
    if (api_->handle_by_index(i, &dev) != kSuccess) continue;
    GpuSample g;
    g.device.index = static_cast<int>(i);
    g.device.vendor = "nvidia";
    g.device.backend = "cuda";
    char buf[96] = {};
    if (api_->uuid(dev, buf, sizeof buf) == kSuccess) g.device.id = buf;
    char model[96] = {};
    if (api_->name(dev, model, sizeof model) == kSuccess) g.device.model = model;
    if (nvmlUtilization_t u{}; api_->utilization && api_->utilization(dev, &u) == kSuccess) {
      g.utilization_ratio = u.gpu / 100.0;
    }
    if (nvmlMemory_t m{}; api_->memory && api_->memory(dev, &m) == kSuccess) {
      g.memory_used_bytes = static_cast<double>(m.used);
      g.memory_free_bytes = static_cast<double>(m.free);
      g.device.memory_bytes = m.total;
    }
    if (unsigned t = 0;
        api_->temperature && api_->temperature(dev, kTemperatureGpu, &t) == kSuccess) {
      g.temperature_celsius = t;
    }
    if (unsigned mw = 0; api_->power && api_->power(dev, &mw) == kSuccess) {
      g.power_watts = mw / 1000.0;
    }
    if (unsigned long long mj = 0; api_->energy && api_->energy(dev, &mj) == kSuccess) {
      g.energy_joules = static_cast<double>(mj) / 1000.0;
    }
    if (unsigned mhz = 0; api_->clock && api_->clock(dev, kClockSm, &mhz) == kSuccess) {
      g.sm_clock_hertz = mhz * 1e6;
    }
    if (unsigned kb = 0; api_->pcie && api_->pcie(dev, kPcieTx, &kb) == kSuccess) {
      g.pcie_tx_bytes_per_second = kb * 1024.0;
    }
    if (unsigned kb = 0; api_->pcie && api_->pcie(dev, kPcieRx, &kb) == kSuccess) {
      g.pcie_rx_bytes_per_second = kb * 1024.0;
    }
    if (unsigned long long c = 0;
        api_->ecc && api_->ecc(dev, kEccCorrected, kEccAggregate, &c) == kSuccess) {
      g.ecc_single_bit = static_cast<double>(c);
    }
    if (unsigned long long c = 0;
        api_->ecc && api_->ecc(dev, kEccUncorrected, kEccAggregate, &c) == kSuccess) {
      g.ecc_double_bit = static_cast<double>(c);
    }
    if (unsigned long long reasons = 0;
        api_->throttle && api_->throttle(dev, &reasons) == kSuccess) {
      g.throttled_thermal = (reasons & (kThrottleSwThermal | kThrottleHwThermal)) != 0;
      g.throttled_power = (reasons & (kThrottleSwPowerCap | kThrottleHwPowerBrake)) != 0;
    }
    {
      const std::lock_guard lock(xid_mutex_);
      if (auto it = xids_.find(i); it != xids_.end()) g.xid_counts = it->second;
      if (auto it = last_xid_.find(i); it != last_xid_.end()) g.last_xid = it->second;
    }
    g.device.health = health_after_xids(g.xid_counts, g.last_xid);
    gpus.push_back(std::move(g));
  }
  add_gpu_metrics(gpus, dcgm_compat_, out);
  return available();
}

}  // namespace exporter
