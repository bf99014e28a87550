// gpulab::hal — the hardware-abstraction layer's C++ API (one include).
//
// How a client drives it:
//
//   #include "hal/hal.hpp"
//   namespace hal = gpulab::hal;
//
//   // 1. Discover and load backends: GPULAB_HAL_BACKENDS (a ':'-list of .so
//   //    files), then GPULAB_HAL_MANIFEST_DIR/*.hal manifests (first line = the
//   //    library path), then this build's backend dir (hal::build_backend_dir()).
//   hal::Registry reg(hal::DiscoveryOptions::from_environment());
//   //    or: hal::Registry reg(hal::DiscoveryOptions::only_dir(dir));
//   //    or: hal::Registry reg; reg.load("/path/gpulab-hal-fast.so");
//
//   // 2. Look at what loaded and what did not (with the reason).
//   for (const auto& b : reg.backends())   // b->name(), b->abi_major(), b->abi_minor(),
//     ...;                                 // b->dtypes(), b->ops(), b->perf_hint(), b->device()
//   for (const auto& r : reg.rejected())   // r.path, r.name, r.reason, r.message
//     ...;
//
//   // 3. Route a request (op, dtype, shape) to the best capable backend,
//   //    or pin one by name. Failure is a clean message, never a downgrade.
//   auto routed = reg.route({hal::Op::kMatmul, hal::DType::kF16, m, n, k});
//   if (!routed) fail(routed.error().message);   // "no loaded backend supports FP16 matmul"
//   const hal::Backend& be = *routed.value();
//
//   // 4. Run it: host conveniences (allocate, upload, run, download, free) ...
//   std::vector<uint8_t> a = hal::encode(hal::DType::kF16, a_f32), b = ..., c(m * n * 2);
//   hal::Status s = be.matmul_host(hal::DType::kF16, m, n, k, a.data(), b.data(), c.data());
//   if (!s.ok()) fail(hal::describe(s));          // code + the backend's message
//   std::vector<float> got = hal::decode(hal::DType::kF16, c.data(), m * n);
//   //    ... or keep buffers on the backend: be.allocate(bytes) -> hal::DeviceBuffer,
//   //    be.upload(), be.matmul(dtype, m, n, k, A, B, C), be.download().
//
//   // 5. Check against the host reference with the per-dtype tolerance.
//   auto want = hal::reference_matmul(m, n, k, a_quantized, b_quantized);
//   bool pass = hal::worst_error_ratio(got, want, hal::tolerance(dtype)) <= 1.0;
//
// Registry's destructor shuts every backend down and dlcloses them in reverse
// load order. The backend ABI itself is the plain-C header gpulab_hal/gpulab_hal.h.
#pragma once

#include <gpulab_hal/gpulab_hal.h>  // IWYU pragma: export

#include "hal/backend.hpp"    // IWYU pragma: export
#include "hal/check.hpp"      // IWYU pragma: export
#include "hal/dtype.hpp"      // IWYU pragma: export
#include "hal/reference.hpp"  // IWYU pragma: export
#include "hal/registry.hpp"   // IWYU pragma: export
#include "hal/status.hpp"     // IWYU pragma: export
