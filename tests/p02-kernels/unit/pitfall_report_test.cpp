// What --pitfall host-pointer concludes from the runtime's answers, for the
// three ways a run can go: the fault reported late (asynchronous launches), at
// the launch (CUDA_LAUNCH_BLOCKING=1), or not at all (HMM/ATS).
#include "kernels/pitfall_report.hpp"

#include <gtest/gtest.h>

namespace {

using kernels::HostPointerRun;

HostPointerRun faulted(bool blocking) {
  HostPointerRun r;
  r.n = 1 << 20;
  r.launch_blocking = blocking;
  r.after_launch = blocking ? "cudaErrorIllegalAddress" : "cudaSuccess";
  r.at_sync = "cudaErrorIllegalAddress";
  r.after_sync = "cudaErrorIllegalAddress";
  return r;
}

TEST(HostPointerReport, AsynchronousLaunchesReportTheFaultAtTheNextSynchronize) {
  const auto r = faulted(false);
  EXPECT_EQ(kernels::first_reporting_call(r), "cudaDeviceSynchronize()");
  const std::string text = kernels::render_host_pointer(r);
  EXPECT_NE(text.find("first reported by: cudaDeviceSynchronize() — not by the launch that faulted"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("cudaErrorIllegalAddress is sticky"), std::string::npos) << text;
  EXPECT_NE(text.find("scale_in_place<<<4096, 256>>>"), std::string::npos) << text;
}

TEST(HostPointerReport, BlockingLaunchesReportItAtTheLaunch) {
  const auto r = faulted(true);
  EXPECT_EQ(kernels::first_reporting_call(r), "cudaGetLastError() after the launch");
  const std::string text = kernels::render_host_pointer(r);
  EXPECT_NE(text.find("the faulting launch itself, because the launch waited for the kernel"), std::string::npos)
      << text;
  EXPECT_EQ(kernels::host_pointer_json(r)["first_reported_by"], "cudaGetLastError() after the launch");
}

TEST(HostPointerReport, WithHmmNothingFailsAndTheHostArrayIsDoubled) {
  HostPointerRun r;
  r.n = 256;
  r.pageable_access = true;
  r.after_launch = r.at_sync = r.after_sync = "cudaSuccess";
  r.host_doubled = true;
  EXPECT_EQ(kernels::first_reporting_call(r), "");
  EXPECT_NE(kernels::render_host_pointer(r).find("no error: this GPU reached the host array"), std::string::npos);
}

}  // namespace
