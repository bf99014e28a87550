/* One honest F32 matmul backend built against an older (v2.0, v2.1) or newer
 * (v2.3) minor of the ABI, chosen by -DGPULAB_TEST_MINOR=0, 1 or 3. The v2.1
 * one also sets the v2.2 op bits it cannot mean (a stray mask): the core must
 * read them as not declared, since the descriptor has no function slot for them. */
#include <stdlib.h>
#include <string.h>

#if GPULAB_TEST_MINOR == 0
#include "../abi/gpulab_hal_v2_0.h"
#elif GPULAB_TEST_MINOR == 1
#include <gpulab_hal/gpulab_hal.h>
#elif GPULAB_TEST_MINOR == 3
#include "../abi/gpulab_hal_v2_3.h"
#else
#error "GPULAB_TEST_MINOR must be 0, 1 or 3"
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

#if GPULAB_TEST_MINOR == 1
static gpulab_hal_status minor_softmax(void* ctx, const gpulab_hal_softmax_args* a, gpulab_hal_error* err) {
  const gpulab_hal_status st = host_check_softmax(a, GPULAB_HAL_DTYPE_F32, 0, err);
  (void)ctx;
  if (st != GPULAB_HAL_OK) return st;
  host_softmax_rows(a->dtype, host_data(a->in), host_data(a->out), a->rows, a->cols);
  return GPULAB_HAL_OK;
}
#endif

#if GPULAB_TEST_MINOR == 0
static const gpulab_hal_backend_v2_0 kDesc = {
    GPULAB_HAL_V2_0_VERSION, sizeof(gpulab_hal_backend_v2_0), "old_minor", "built against ABI v2.0",
    GPULAB_HAL_DTYPE_F32, GPULAB_HAL_OP_BUFFER | GPULAB_HAL_OP_MATMUL, 1, GPULAB_HAL_FEATURE_HOST_MEMORY, 0,
    {0, 0, 0, 0, 0, 0, 0, 0}, NULL, NULL, host_buffer_alloc, host_buffer_free, host_copy_to_device,
    host_copy_to_host, minor_matmul, NULL};
#elif GPULAB_TEST_MINOR == 1
static gpulab_hal_status v21_describe(void* ctx, char* out, uint32_t size, gpulab_hal_error* err) {
  (void)ctx;
  gpulab_hal_clear_error(err);
  snprintf(out, size, "backend built against ABI v2.1");
  return GPULAB_HAL_OK;
}
/* Version and size as a v2.1 build wrote them; the v2.2 slots exist in this
 * struct only because it uses today's type, and lie past struct_size. */
static const gpulab_hal_backend kDesc = {
    GPULAB_HAL_MAKE_VERSION(2u, 1u), GPULAB_HAL_DESCRIPTOR_SIZE_V2_1, "v21_minor", "built against ABI v2.1",
    GPULAB_HAL_DTYPE_F32, GPULAB_HAL_OPS_V2_2, 1, GPULAB_HAL_FEATURE_HOST_MEMORY, 0,
    {0, 0, 0, 0, 0, 0, 0, 0}, NULL, NULL, host_buffer_alloc, host_buffer_free, host_copy_to_device,
    host_copy_to_host, minor_matmul, minor_softmax, v21_describe, NULL, NULL, NULL, NULL};
#else
static gpulab_hal_status new_describe(void* ctx, char* out, uint32_t size, gpulab_hal_error* err) {
  (void)ctx;
  gpulab_hal_clear_error(err);
  snprintf(out, size, "future backend, ABI v2.3");
  return GPULAB_HAL_OK;
}
static gpulab_hal_status new_sync(void* ctx, gpulab_hal_error* err) {
  (void)ctx;
  gpulab_hal_clear_error(err);
  return GPULAB_HAL_OK;
}
static const gpulab_hal_backend_v2_3 kDesc = {
    {GPULAB_HAL_V2_3_VERSION, sizeof(gpulab_hal_backend_v2_3), "new_minor", "built against ABI v2.3",
     GPULAB_HAL_DTYPE_F32, GPULAB_HAL_OP_BUFFER | GPULAB_HAL_OP_MATMUL, 1, GPULAB_HAL_FEATURE_HOST_MEMORY, 0,
     {0, 0, 0, 0, 0, 0, 0, 0}, NULL, NULL, host_buffer_alloc, host_buffer_free, host_copy_to_device,
     host_copy_to_host, minor_matmul, NULL, new_describe, NULL, NULL, NULL, NULL},
    new_sync,
    4096};
#endif

/* The core reads this address as bytes (version, size, then what the size covers). */
const gpulab_hal_backend* gpulab_hal_backend_register(void) { return (const gpulab_hal_backend*)(const void*)&kDesc; }
