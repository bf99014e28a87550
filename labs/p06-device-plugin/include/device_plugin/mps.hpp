// MPS as a sharing mode, modelled on NVIDIA's k8s-device-plugin
// (`sharing.mps`, cmd/mps-control-daemon): one MPS control daemon per
// resource, started with the GPUs in EXCLUSIVE_PROCESS compute mode, whose
// pipe directory every client must reach. The daemon gives each client a
// default share of the GPU's threads (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE) and of
// its memory (a pinned device memory limit), both 1/replicas. What MPS does not
// give: fault isolation (a client's fatal error tears down the shared server
// and every client on it) and memory bandwidth or L2 isolation.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace device_plugin {

// Where the daemon's files live on the host, and where a pod sees them
// (NVIDIA's defaults: host root /run/nvidia/mps, container root /mps).
inline constexpr std::string_view kMpsHostRoot = "/run/nvidia/mps";
inline constexpr std::string_view kMpsContainerRoot = "/mps";

struct MpsDaemon {
  std::string resource;                         // "nvidia.com/gpu"
  std::string pipe_dir;                         // in the container: /mps/<resource>/pipe
  std::string log_dir;                          // in the container: /mps/<resource>/log
  std::string host_pipe_dir;                    // /run/nvidia/mps/<resource>/pipe
  std::string host_log_dir;                     // /run/nvidia/mps/<resource>/log
  std::string host_shm_dir;                     // /run/nvidia/mps/shm, mounted at /dev/shm
  int active_thread_percentage = 100;           // 100 / replicas
  std::vector<std::uint64_t> pinned_limit_mib;  // per GPU index: memory / replicas
  // What the daemon is told at start, in nvidia-cuda-mps-control's words.
  [[nodiscard]] std::vector<std::string> control_commands() const;
};

// The daemon for `resource` on GPUs of `memory_bytes` each, `replicas` clients per GPU.
MpsDaemon mps_daemon(const std::string& resource, const std::vector<std::uint64_t>& memory_bytes,
                     int replicas);

}  // namespace device_plugin
