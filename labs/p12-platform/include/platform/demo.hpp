// `gpulabd demo`: a control plane and two agents on loopback as real
// processes, and a scripted day — jobs of each kind, bad input, a device
// fault, a killed agent, a killed control plane, and the same training job on
// every backend — each step checked and printed as PASS or FAIL.
#pragma once

#include <filesystem>

namespace platform {

struct DemoOptions {
  bool quick = false;
  std::filesystem::path keep_dir;  // empty: a temporary directory, removed afterwards
};

// 0 when every check passed, 1 otherwise.
int run_demo(const DemoOptions& options);

}  // namespace platform
