/* cpu_ref — the reference backend: the obvious triple loop, one thread,
 * binary32 accumulation for every dtype it declares, and every op of ABI 2.2
 * (the decoder-layer ops one row and one head at a time, host_layer_ops.h). Slow on purpose; its
 * job is to be easy to trust. */
#include "../common/host_backend.h"
#include "../common/host_layer_ops.h"

#define CPU_REF_DTYPES (GPULAB_HAL_DTYPE_F32 | GPULAB_HAL_DTYPE_F16 | GPULAB_HAL_DTYPE_BF16)

static gpulab_hal_status cpu_ref_matmul(void* ctx, const gpulab_hal_matmul_args* a, gpulab_hal_error* err) {
  uint64_t i, j, p;
  const gpulab_hal_status st = host_check_matmul(a, CPU_REF_DTYPES, 0, err);
  (void)ctx;
  if (st != GPULAB_HAL_OK) return st;
  for (i = 0; i < a->m; ++i) {
    for (j = 0; j < a->n; ++j) {
      float acc = 0.0f;
      for (p = 0; p < a->k; ++p)
        acc += gpulab_hal_load(a->dtype, host_data(a->a), i * a->k + p) *
               gpulab_hal_load(a->dtype, host_data(a->b), p * a->n + j);
      gpulab_hal_store(a->dtype, host_data(a->c), i * a->n + j, acc);
    }
  }
  return GPULAB_HAL_OK;
}

static gpulab_hal_status cpu_ref_softmax(void* ctx, const gpulab_hal_softmax_args* a, gpulab_hal_error* err) {
  const gpulab_hal_status st = host_check_softmax(a, CPU_REF_DTYPES, 0, err);
  (void)ctx;
  if (st != GPULAB_HAL_OK) return st;
  host_softmax_rows(a->dtype, host_data(a->in), host_data(a->out), a->rows, a->cols);
  return GPULAB_HAL_OK;
}

static gpulab_hal_status cpu_ref_rmsnorm(void* ctx, const gpulab_hal_rmsnorm_args* a, gpulab_hal_error* err) {
  const gpulab_hal_status st = host_check_rmsnorm(a, CPU_REF_DTYPES, err);
  (void)ctx;
  if (st != GPULAB_HAL_OK) return st;
  host_rmsnorm_rows(a, 0, a->rows);
  return GPULAB_HAL_OK;
}

static gpulab_hal_status cpu_ref_rope(void* ctx, const gpulab_hal_rope_args* a, gpulab_hal_error* err) {
  const gpulab_hal_status st = host_check_rope(a, CPU_REF_DTYPES, err);
  (void)ctx;
  if (st != GPULAB_HAL_OK) return st;
  host_rope_rows(a, 0, a->rows);
  return GPULAB_HAL_OK;
}

static gpulab_hal_status cpu_ref_silu_mul(void* ctx, const gpulab_hal_silu_mul_args* a, gpulab_hal_error* err) {
  const gpulab_hal_status st = host_check_silu_mul(a, CPU_REF_DTYPES, err);
  (void)ctx;
  if (st != GPULAB_HAL_OK) return st;
  host_silu_mul_rows(a, 0, a->rows);
  return GPULAB_HAL_OK;
}

static gpulab_hal_status cpu_ref_paged_attention(void* ctx, const gpulab_hal_paged_attention_args* a,
                                                 gpulab_hal_error* err) {
  const gpulab_hal_status st = host_check_paged_attention(a, CPU_REF_DTYPES, err);
  (void)ctx;
  if (st != GPULAB_HAL_OK) return st;
  if (!host_paged_attention_rows(a, 0, a->rows))
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_OUT_OF_MEMORY, "paged_attention: score scratch allocation failed");
  return GPULAB_HAL_OK;
}

static gpulab_hal_status cpu_ref_describe(void* ctx, char* out, uint32_t out_size, gpulab_hal_error* err) {
  (void)ctx;
  gpulab_hal_clear_error(err);
  snprintf(out, out_size, "host CPU, 1 thread, plain loops");
  return GPULAB_HAL_OK;
}

static const gpulab_hal_backend kCpuRef = {
    GPULAB_HAL_ABI_VERSION,
    sizeof(gpulab_hal_backend),
    "cpu_ref",
    "reference: triple loop, one thread, F32 accumulation",
    CPU_REF_DTYPES,
    GPULAB_HAL_OPS_V2_2,
    1, /* perf_hint */
    GPULAB_HAL_FEATURE_HOST_MEMORY,
    0, /* max_dim */
    {0, 0, 0, 0, 0, 0, 0, 0},
    NULL, /* init: no state */
    NULL,
    host_buffer_alloc,
    host_buffer_free,
    host_copy_to_device,
    host_copy_to_host,
    cpu_ref_matmul,
    cpu_ref_softmax,
    cpu_ref_describe,
    cpu_ref_rmsnorm,
    cpu_ref_rope,
    cpu_ref_silu_mul,
    cpu_ref_paged_attention,
};

const gpulab_hal_backend* gpulab_hal_backend_register(void) { return &kCpuRef; }
