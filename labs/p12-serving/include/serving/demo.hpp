// gpulab-serve demo: the server started in-process on a free loopback port,
// a scripted session of real HTTP requests (plain, streamed, a shared
// prefix, a bad field, the model list, the metrics), each answer printed
// without its time-dependent fields and every completion checked against the
// reference decoder. The README's checked transcript.
#pragma once

#include "serving/app.hpp"

namespace serving {

// Returns kExitOk when every check passed, kExitCheckFailed otherwise.
int run_demo(const ModelChoice& choice, const EngineOptions& engine);

}  // namespace serving
