// hal-demo's output, separate from its flags: the walkthrough (what loaded, what
// was rejected and why, conformance per dtype and op, capability routing) as the
// text transcript or one JSON document, and the verdict the exit status carries.
#pragma once

#include <string>

#include "gpulab/json.hpp"
#include "hal/registry.hpp"
#include "hal/walkthrough.hpp"

namespace gpulab::hal {

std::string render_walkthrough(const Registry& reg, const Walkthrough& w, const WalkthroughOptions& wo,
                               bool show_devices);
gpulab::Json walkthrough_json(const Registry& reg, const Walkthrough& w, const WalkthroughOptions& wo);

// The text verdict: a backend loaded, and every loaded one passes FP32 matmul and its declared
// ABI 2.2 ops. (The JSON document carries its own "pass", which does not ask for a backend.)
bool walkthrough_passed(const Registry& reg, const Walkthrough& w);

}  // namespace gpulab::hal
