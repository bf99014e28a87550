// The BPF side of gpulab-ioctl-latency: checks the machine can run it, loads the CO-RE object
// (the bpftool skeleton, ioctl_latency.skel.h), tells it which files to watch, attaches it to
// syscalls:sys_enter_ioctl / sys_exit_ioctl and reads its maps back as an IoctlReport.
// Built only when clang, bpftool, libbpf and the kernel's BTF are there (ebpf/ebpf.cmake).
#pragma once

#include <memory>
#include <vector>

#include "exporter/ioctl_latency.hpp"
#include "exporter/ioctl_target.hpp"

struct ioctl_latency_bpf;

namespace exporter {

// Throws gpulab::Unsupported with the reason when this machine cannot run the probe: not root,
// no BTF, or no syscall tracepoints. Mounts tracefs on /sys/kernel/tracing when it is not
// mounted (as perf does): libbpf finds a tracepoint's id there.
void check_ioctl_probe_prerequisites();

class IoctlLatencyProbe {
 public:
  // Loads, fills the targets map and attaches. Throws gpulab::RunError with libbpf's reason.
  explicit IoctlLatencyProbe(std::vector<IoctlTarget> targets);
  ~IoctlLatencyProbe();
  IoctlLatencyProbe(const IoctlLatencyProbe&) = delete;
  IoctlLatencyProbe& operator=(const IoctlLatencyProbe&) = delete;

  // Stops counting: calls after this are not seen.
  void detach();
  // What the maps hold now. While attached a call may be half counted (its slot without its
  // count): each series' count is the slots' sum, so the histogram is always consistent.
  // After detach() the program's own count must equal that sum (RunError otherwise).
  [[nodiscard]] IoctlReport read(double seconds) const;

 private:
  std::vector<IoctlTarget> targets_;
  ioctl_latency_bpf* skel_ = nullptr;
  bool attached_ = false;
};

}  // namespace exporter
