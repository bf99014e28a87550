/* One honest F32 matmul backend built against an older (v2.0) or newer (v2.2)
 * minor of the ABI, chosen by -DGPULAB_TEST_MINOR=0 or 2. */
#include <stdlib.h>
#include <string.h>

#if GPULAB_TEST_MINOR == 0
#include "../abi/gpulab_hal_v2_0.h"
#elif GPULAB_TEST_MINOR == 2
#include "../abi/gpulab_hal_v2_2.h"
#else
#error "GPULAB_TEST_MINOR must be 0 or 2"
#endif
#include "../../../labs/p09-hal/backends/common/host_backend.h"

static gpulab_hal_status minor_matmul(void* ctx, const gpulab_hal_matmul_args* a, gpulab_hal_error* err) {
  uint64_t i, j, p;
  const gpulab_hal_status st = host_check_matmul(a, GPULAB_HAL_DTYPE_F32, 0, err);
  (void)ctx;
  if (st != GPULAB_HAL_OK) return st;
  for (i = 0; i < a->m; ++i)
    for (j = 0; j < a->n; ++j) {
      float acc = 0.0f;
      for (p = 0; p < a->k; ++p)
        acc += ((const float*)host_data(a->a))[i * a->k + p] * ((const float*)host_data(a->b))[p * a->n + j];
      ((float*)host_data(a->c))[i * a->n + j] = acc;
    }
  return GPULAB_HAL_OK;
}

#if GPULAB_TEST_MINOR == 0
static const gpulab_hal_backend_v2_0 kDesc = {
    GPULAB_HAL_V2_0_VERSION, sizeof(gpulab_hal_backend_v2_0), "old_minor", "built against ABI v2.0",
    GPULAB_HAL_DTYPE_F32, GPULAB_HAL_OP_BUFFER | GPULAB_HAL_OP_MATMUL, 1, GPULAB_HAL_FEATURE_HOST_MEMORY, 0,
    {0, 0, 0, 0, 0, 0, 0, 0}, NULL, NULL, host_buffer_alloc, host_buffer_free, host_copy_to_device,
    host_copy_to_host, minor_matmul, NULL};
#else
static gpulab_hal_status new_describe(void* ctx, char* out, uint32_t size, gpulab_hal_error* err) {
  (void)ctx;
  gpulab_hal_clear_error(err);
  snprintf(out, size, "future backend, ABI v2.2");
  return GPULAB_HAL_OK;
}
static gpulab_hal_status new_sync(void* ctx, gpulab_hal_error* err) {
  (void)ctx;
  gpulab_hal_clear_error(err);
  return GPULAB_HAL_OK;
}
static const gpulab_hal_backend_v2_2 kDesc = {
    {GPULAB_HAL_V2_2_VERSION, sizeof(gpulab_hal_backend_v2_2), "new_minor", "built against ABI v2.2",
     GPULAB_HAL_DTYPE_F32, GPULAB_HAL_OP_BUFFER | GPULAB_HAL_OP_MATMUL, 1, GPULAB_HAL_FEATURE_HOST_MEMORY, 0,
     {0, 0, 0, 0, 0, 0, 0, 0}, NULL, NULL, host_buffer_alloc, host_buffer_free, host_copy_to_device,
     host_copy_to_host, minor_matmul, NULL, new_describe},
    new_sync,
    4096};
#endif

/* The core reads this address as bytes (version, size, then what the size covers). */
const gpulab_hal_backend* gpulab_hal_backend_register(void) { return (const gpulab_hal_backend*)(const void*)&kDesc; }
