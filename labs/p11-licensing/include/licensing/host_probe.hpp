// Reads the identifying components of a Linux host from /etc, /proc and /sys
// under a root directory (so tests point it at a fake tree), plus GPU UUIDs.
// Every component is either read, or reported unavailable with the reason —
// a missing DMI table or GPU is normal, never an error.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "licensing/fingerprint.hpp"

namespace licensing {

struct Reading {
  std::string kind;              // component kind, e.g. "nic_mac"
  std::string source;            // where it came from, e.g. "/sys/class/net/eth0/address"
  std::vector<std::string> raw;  // the identifiers (several NICs/GPUs); empty = unavailable
  std::string note;              // why unavailable, or a remark
  [[nodiscard]] bool ok() const { return !raw.empty(); }
};

struct GpuProbe {
  std::vector<std::string> uuids;
  std::string source;  // "NVML", "/proc/driver/nvidia/gpus"
  std::string note;    // why there are none
};

// GPU UUIDs through NVML (libnvidia-ml.so.1 loaded with dlopen: no build or
// run-time dependency on the NVIDIA driver).
GpuProbe probe_gpus_nvml();
// GPU UUIDs from the NVIDIA driver's procfs ("GPU UUID:" lines) under `root`.
GpuProbe probe_gpus_procfs(const std::filesystem::path& root);

struct ProbeOptions {
  std::filesystem::path root = "/";
  // Default (empty): NVML when root is "/", then the driver's procfs under root.
  std::function<GpuProbe()> gpu_probe;
};

std::vector<Reading> probe_host(const ProbeOptions& options);

// Salted hashes of every available reading, sorted and de-duplicated.
Fingerprint fingerprint_of(std::string_view product, const std::vector<Reading>& readings);

}  // namespace licensing
