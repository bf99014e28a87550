#include "kernels/pitfall_report.hpp"

#include <fmt/format.h>

namespace kernels {
namespace {

constexpr const char* kOk = "cudaSuccess";

const char* yes_no(bool b) { return b ? "yes" : "no"; }

}  // namespace

std::string first_reporting_call(const HostPointerRun& r) {
  if (r.after_launch != kOk) return "cudaGetLastError() after the launch";
  if (r.at_sync != kOk) return "cudaDeviceSynchronize()";
  if (r.after_sync != kOk) return "cudaGetLastError() after the synchronize";
  return "";
}

std::string render_host_pointer(const HostPointerRun& r) {
  std::string out = fmt::format(
      "host-pointer pitfall: scale_in_place<<<{}, 256>>>(p, {}, 2.0f) with p = a host std::vector's data()\n",
      (r.n + 255) / 256, r.n);
  out += fmt::format("  CUDA_LAUNCH_BLOCKING=1                 : {} ({})\n", yes_no(r.launch_blocking),
                     r.launch_blocking ? "each launch returns once its kernel has finished"
                                       : "a launch returns before its kernel runs");
  out += fmt::format("  GPU may read pageable host memory      : {} (cudaDevAttrPageableMemoryAccess)\n",
                     yes_no(r.pageable_access));
  out += fmt::format("  cudaGetLastError() after the launch    : {}\n", r.after_launch);
  out += fmt::format("  cudaDeviceSynchronize()                : {}\n", r.at_sync);
  out += fmt::format("  cudaGetLastError() after the synchronize: {}\n", r.after_sync);
  out += fmt::format("  every host element doubled             : {}\n", yes_no(r.host_doubled));
  const std::string first = first_reporting_call(r);
  if (first.empty()) {
    out += r.host_doubled ? "no error: this GPU reached the host array through the system's page tables "
                            "(HMM or ATS); without them the same launch faults\n"
                          : "no error reported, yet the host array is not doubled\n";
    return out;
  }
  out += fmt::format("first reported by: {}", first);
  if (first == "cudaDeviceSynchronize()")
    out += " — not by the launch that faulted, which returned success (CUDA_LAUNCH_BLOCKING=1 moves it there)";
  else if (first.starts_with("cudaGetLastError() after the launch"))
    out += r.launch_blocking ? " — the faulting launch itself, because the launch waited for the kernel"
                             : " — the launch itself";
  out += "\n";
  if (r.after_sync != kOk)
    out += fmt::format("{} is sticky: the context is lost, every later call fails the same way, and only a new "
                       "process recovers\n",
                       r.after_sync);
  return out;
}

gpulab::Json host_pointer_json(const HostPointerRun& r) {
  return {{"pitfall", "host-pointer"},
          {"n", r.n},
          {"launch_blocking", r.launch_blocking},
          {"pageable_memory_access", r.pageable_access},
          {"after_launch", r.after_launch},
          {"at_sync", r.at_sync},
          {"after_sync", r.after_sync},
          {"host_doubled", r.host_doubled},
          {"first_reported_by", first_reporting_call(r)}};
}

}  // namespace kernels
