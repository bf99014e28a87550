/* liar — the war story "a backend declared FP16 and produced garbage".
 * F32 is honest. For F16 it reads every input as if it were BF16 (the same 16
 * bits, a different format) — plausible-looking, finite, and wrong. It also
 * claims a high perf hint, so trusting declarations would route FP16 work to
 * it. Only a conformance run catches it. */
#include "../common/host_backend.h"

#define LIAR_DTYPES (GPULAB_HAL_DTYPE_F32 | GPULAB_HAL_DTYPE_F16)

static gpulab_hal_status liar_matmul(void* ctx, const gpulab_hal_matmul_args* a, gpulab_hal_error* err) {
  uint64_t i, j, p;
  const gpulab_hal_status st = host_check_matmul(a, LIAR_DTYPES, 0, err);
  /* The bug: F16 bits decoded as BF16. */
  const uint32_t load_as = a != NULL && a->dtype == GPULAB_HAL_DTYPE_F16 ? GPULAB_HAL_DTYPE_BF16 : GPULAB_HAL_DTYPE_F32;
  (void)ctx;
  if (st != GPULAB_HAL_OK) return st;
  for (i = 0; i < a->m; ++i) {
    for (j = 0; j < a->n; ++j) {
      float acc = 0.0f;
      for (p = 0; p < a->k; ++p)
        acc += gpulab_hal_load(load_as, host_data(a->a), i * a->k + p) *
               gpulab_hal_load(load_as, host_data(a->b), p * a->n + j);
      gpulab_hal_store(a->dtype, host_data(a->c), i * a->n + j, acc);
    }
  }
  return GPULAB_HAL_OK;
}

static gpulab_hal_status liar_softmax(void* ctx, const gpulab_hal_softmax_args* a, gpulab_hal_error* err) {
  const gpulab_hal_status st = host_check_softmax(a, LIAR_DTYPES, 0, err);
  (void)ctx;
  if (st != GPULAB_HAL_OK) return st;
  /* Same bug: F16 rows are read as BF16 and written back as F16. */
  if (a->dtype == GPULAB_HAL_DTYPE_F16) {
    uint64_t i;
    const uint64_t count = a->rows * a->cols;
    float* tmp = (float*)malloc((size_t)(count ? count : 1) * sizeof(float));
    if (tmp == NULL) return gpulab_hal_fail(err, GPULAB_HAL_ERR_OUT_OF_MEMORY, "malloc failed");
    for (i = 0; i < count; ++i) tmp[i] = gpulab_hal_load(GPULAB_HAL_DTYPE_BF16, host_data(a->in), i);
    host_softmax_rows(GPULAB_HAL_DTYPE_F32, tmp, tmp, a->rows, a->cols);
    for (i = 0; i < count; ++i) gpulab_hal_store(GPULAB_HAL_DTYPE_F16, host_data(a->out), i, tmp[i]);
    free(tmp);
    return GPULAB_HAL_OK;
  }
  host_softmax_rows(a->dtype, host_data(a->in), host_data(a->out), a->rows, a->cols);
  return GPULAB_HAL_OK;
}

static gpulab_hal_status liar_describe(void* ctx, char* out, uint32_t out_size, gpulab_hal_error* err) {
  (void)ctx;
  gpulab_hal_clear_error(err);
  snprintf(out, out_size, "host CPU, 1 thread (claims to be fast)");
  return GPULAB_HAL_OK;
}

static const gpulab_hal_backend kLiar = {
    /* Stays at ABI 2.1 (version and size as a 2.1 build wrote them): the
     * core must keep loading it and read the 2.2 ops as not declared. */
    GPULAB_HAL_MAKE_VERSION(2u, 1u),
    GPULAB_HAL_DESCRIPTOR_SIZE_V2_1,
    "liar",
    "declares F16 and computes it wrongly (conformance must catch it)",
    LIAR_DTYPES,
    GPULAB_HAL_OP_BUFFER | GPULAB_HAL_OP_MATMUL | GPULAB_HAL_OP_SOFTMAX,
    20, /* perf_hint: a lie too */
    GPULAB_HAL_FEATURE_HOST_MEMORY,
    0,
    {0, 0, 0, 0, 0, 0, 0, 0},
    NULL,
    NULL,
    host_buffer_alloc,
    host_buffer_free,
    host_copy_to_device,
    host_copy_to_host,
    liar_matmul,
    liar_softmax,
    liar_describe,
    /* past the 2.1 size: the core never reads these */
    NULL,
    NULL,
    NULL,
    NULL,
};

const gpulab_hal_backend* gpulab_hal_backend_register(void) { return &kLiar; }
