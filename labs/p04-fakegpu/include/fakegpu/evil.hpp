// fakegpu-evil: the adversarial client. Every case must fail cleanly — the
// documented errno, no crash, no hang — and at the end the device must hold
// exactly what it held before (a final INFO from a fresh fd shows no leak).
#pragma once

#include <cstdio>
#include <string>

#include "fakegpu/client_checks.hpp"

namespace fakegpu {

// Each case prints "PASS <case>  <detail>" or "FAIL ...". `threads_per_race` is the
// number of SUBMITs each of the two racing threads makes.
ClientReport run_evil_cases(Device& dev, const std::string& path, std::FILE* out,
                            int submits_per_thread = 400);

}  // namespace fakegpu
