#include "gpulab/cuda/device_report.hpp"

#include <fmt/format.h>

namespace gpulab::cuda {

std::string version_text(int version) {
  return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

std::string device_line(const DeviceInfo& d) {
  return fmt::format("device   {} (sm_{}{}, {} SMs), driver {}, runtime {}\n", d.name, d.cc_major,
                     d.cc_minor, d.sm_count, version_text(d.driver_version),
                     version_text(d.runtime_version));
}

gpulab::Json device_json(const DeviceInfo& d) {
  return {{"name", d.name},
          {"compute_capability", fmt::format("{}.{}", d.cc_major, d.cc_minor)},
          {"sms", d.sm_count},
          {"driver", version_text(d.driver_version)},
          {"runtime", version_text(d.runtime_version)}};
}

}  // namespace gpulab::cuda
