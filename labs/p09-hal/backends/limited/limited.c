/* limited — a deliberately small backend: F32 only, matmul only (no softmax),
 * at most 1024 in any dimension, a low perf hint. The router must steer FP16,
 * softmax and big shapes away from it without being told. */
#include "../common/host_backend.h"

#define LIMITED_MAX_DIM 1024u

static gpulab_hal_status limited_matmul(void* ctx, const gpulab_hal_matmul_args* a, gpulab_hal_error* err) {
  uint64_t i, j, p;
  const gpulab_hal_status st = host_check_matmul(a, GPULAB_HAL_DTYPE_F32, LIMITED_MAX_DIM, err);
  const float *A, *B;
  float* C;
  (void)ctx;
  if (st != GPULAB_HAL_OK) return st;
  A = (const float*)host_data(a->a);
  B = (const float*)host_data(a->b);
  C = (float*)host_data(a->c);
  /* i-p-j order: unit stride through B and C, nothing else. */
  for (i = 0; i < a->m; ++i) {
    for (j = 0; j < a->n; ++j) C[i * a->n + j] = 0.0f;
    for (p = 0; p < a->k; ++p) {
      const float av = A[i * a->k + p];
      for (j = 0; j < a->n; ++j) C[i * a->n + j] += av * B[p * a->n + j];
    }
  }
  return GPULAB_HAL_OK;
}

static gpulab_hal_status limited_describe(void* ctx, char* out, uint32_t out_size, gpulab_hal_error* err) {
  (void)ctx;
  gpulab_hal_clear_error(err);
  snprintf(out, out_size, "host CPU, 1 thread, dimensions up to %u", LIMITED_MAX_DIM);
  return GPULAB_HAL_OK;
}

static const gpulab_hal_backend kLimited = {
    /* Stays at ABI 2.1 (version and size as a 2.1 build wrote them): the
     * core must keep loading it and read the 2.2 ops as not declared. */
    GPULAB_HAL_MAKE_VERSION(2u, 1u),
    GPULAB_HAL_DESCRIPTOR_SIZE_V2_1,
    "limited",
    "F32 matmul only, dimensions up to 1024",
    GPULAB_HAL_DTYPE_F32,
    GPULAB_HAL_OP_BUFFER | GPULAB_HAL_OP_MATMUL,
    2, /* perf_hint */
    GPULAB_HAL_FEATURE_HOST_MEMORY,
    LIMITED_MAX_DIM,
    {0, 0, 0, 0, 0, 0, 0, 0},
    NULL,
    NULL,
    host_buffer_alloc,
    host_buffer_free,
    host_copy_to_device,
    host_copy_to_host,
    limited_matmul,
    NULL, /* no softmax */
    limited_describe,
    /* past the 2.1 size: the core never reads these */
    NULL,
    NULL,
    NULL,
    NULL,
};

const gpulab_hal_backend* gpulab_hal_backend_register(void) { return &kLimited; }
