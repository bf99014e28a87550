/* stale — a backend built against ABI v1 (see gpulab_hal_v1.h). It exports
 * the right symbol and works, but its descriptor has a different layout: read
 * as v2 every field after the first would be at the wrong offset. The core
 * reads only the version word and refuses it: "abi v1 != core v2". */
#include "gpulab_hal_v1.h"

static int stale_matmul(const float* a, const float* b, float* c, int m, int n, int k) {
  int i, j, p;
  for (i = 0; i < m; ++i)
    for (j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (p = 0; p < k; ++p) acc += a[i * k + p] * b[p * n + j];
      c[i * n + j] = acc;
    }
  return 0;
}

static const gpulab_hal_v1_backend kStale = {GPULAB_HAL_V1_ABI_VERSION, "stale", GPULAB_HAL_V1_DTYPE_F32, 3,
                                             stale_matmul};

const gpulab_hal_v1_backend* gpulab_hal_backend_register(void) { return &kStale; }
