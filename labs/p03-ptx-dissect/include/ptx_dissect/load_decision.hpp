// What the CUDA driver does when a fatbin is loaded on a given GPU:
//   1. a SASS cubin for the same major architecture and a minor version not
//      above the device's runs as is (sm_80 SASS runs on sm_86 and sm_89, not
//      on sm_90); the highest such cubin wins;
//   2. otherwise PTX for a virtual architecture not above the device's is
//      JIT-compiled at load (and cached in ~/.nv/ComputeCache); the highest wins;
//   3. otherwise the load fails: "no kernel image is available for execution".
// Architecture-specific targets (sm_90a, sm_100a) are outside this model.
#pragma once

#include <string>
#include <vector>

namespace ptx_dissect {

struct FatbinManifest {
  std::vector<int> sass;  // sm_XX cubins
  std::vector<int> ptx;   // compute_XX PTX
};

// The curriculum's -gencode matrix: sm_80 and sm_90 SASS plus compute_90 PTX.
FatbinManifest curriculum_matrix();

struct LoadDecision {
  enum class Action { kRunSass, kJitPtx, kFail };
  Action action = Action::kFail;
  int image_arch = 0;  // the cubin or PTX chosen
  std::string explanation;
};

LoadDecision decide_load(const FatbinManifest& fatbin, int device_arch);

struct Gpu {
  const char* name;
  int arch;
};

// The devices the table shows: the curriculum's three (A100, H100, whatever
// ships next) plus the cases that exercise each rule.
std::vector<Gpu> reference_gpus();

}  // namespace ptx_dissect
