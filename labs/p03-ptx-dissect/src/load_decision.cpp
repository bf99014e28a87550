#include "ptx_dissect/load_decision.hpp"

#include <fmt/format.h>

namespace ptx_dissect {

FatbinManifest curriculum_matrix() {
  return {{80, 90}, {90}};
}

LoadDecision decide_load(const FatbinManifest& fatbin, int device_arch) {
  LoadDecision d;
  int best_sass = 0;
  for (const int a : fatbin.sass)
    if (a / 10 == device_arch / 10 && a <= device_arch && a > best_sass) best_sass = a;
  if (best_sass != 0) {
    d.action = LoadDecision::Action::kRunSass;
    d.image_arch = best_sass;
    d.explanation =
        best_sass == device_arch
            ? "exact SASS match, no compilation at load"
            : fmt::format("same major ({}.x), older minor: binary compatible", device_arch / 10);
    return d;
  }
  int best_ptx = 0;
  for (const int a : fatbin.ptx)
    if (a <= device_arch && a > best_ptx) best_ptx = a;
  if (best_ptx != 0) {
    d.action = LoadDecision::Action::kJitPtx;
    d.image_arch = best_ptx;
    d.explanation =
        "no compatible SASS: driver JIT at first load, cached in ~/.nv/ComputeCache (the cold "
        "start)";
    return d;
  }
  d.explanation = "no compatible SASS and no PTX old enough: \"no kernel image is available\"";
  return d;
}

std::vector<Gpu> reference_gpus() {
  return {{"T4", 75},          {"A100", 80},  {"A10 / A40", 86}, {"L4 / L40S", 89},
          {"H100 / H200", 90}, {"B200", 100}, {"RTX 5090", 120}};
}

}  // namespace ptx_dissect
