// NVML, loaded at run time with dlopen("libnvidia-ml.so.1") so the exporter
// starts and serves on a machine without an NVIDIA driver (source_up 0, with
// the dlopen error as the reason). Per GPU: utilisation, memory, temperature,
// power, energy, SM clock, PCIe throughput, ECC totals, throttle reasons; Xid
// events through an NVML event set watched by a background thread.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "exporter/source.hpp"

namespace exporter {

class NvmlSource : public Source {
 public:
  explicit NvmlSource(std::string library = "libnvidia-ml.so.1", bool dcgm_compat = false);
  ~NvmlSource() override;
  NvmlSource(const NvmlSource&) = delete;
  NvmlSource& operator=(const NvmlSource&) = delete;

  [[nodiscard]] std::string_view name() const override { return "nvml"; }
  // Loads and initialises NVML on first use (and retries while it fails).
  Availability collect(gpulab::prom::Exposition& out) override;

  struct Api;  // the resolved entry points (nvml_source.cpp)

 private:
  Availability load();
  void watch_xids();

  std::string library_;
  bool dcgm_compat_;
  void* handle_ = nullptr;
  std::unique_ptr<Api> api_;
  bool initialised_ = false;
  void* event_set_ = nullptr;
  std::atomic<bool> stop_{false};
  std::thread xid_thread_;
  std::mutex xid_mutex_;
  std::map<unsigned, std::map<unsigned, double>> xids_;  // gpu -> xid -> count
  std::map<unsigned, unsigned> last_xid_;
};

}  // namespace exporter
