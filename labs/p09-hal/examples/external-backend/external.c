/* external — a backend written and built OUTSIDE the gpulab build, against
 * nothing but the installed ABI header (gpulab_hal/gpulab_hal.h). It is the
 * curriculum's "4th backend without recompiling the core": build it with the
 * CMakeLists.txt next to it, or with one compiler command,
 *
 *   cc -std=c11 -O2 -shared -fPIC -fvisibility=hidden \
 *      -I labs/p09-hal/include external.c -o gpulab-hal-external.so
 *
 * and hand it to an already-built hal-demo:
 *
 *   GPULAB_HAL_BACKENDS=$PWD/gpulab-hal-external.so hal-demo
 *
 * It does F32 and BF16 matmul (i-k-j loops, binary32 accumulation) with its
 * own host buffers, and reports itself through the v2.1 describe_device. */
#include <gpulab_hal/gpulab_hal.h>
#include <stdlib.h>
#include <string.h>

#define EXT_DTYPES (GPULAB_HAL_DTYPE_F32 | GPULAB_HAL_DTYPE_BF16)

typedef struct ext_buffer {
  uint64_t bytes;
  unsigned char* data;
} ext_buffer;

static gpulab_hal_status ext_alloc(void* ctx, uint64_t bytes, gpulab_hal_buffer* out, gpulab_hal_error* err) {
  ext_buffer* b;
  (void)ctx;
  gpulab_hal_clear_error(err);
  if (out == NULL) return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "out is NULL");
  b = (ext_buffer*)calloc(1, sizeof *b);
  if (b != NULL) b->data = (unsigned char*)calloc(1, (size_t)(bytes ? bytes : 1));
  if (b == NULL || b->data == NULL) {
    free(b);
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_OUT_OF_MEMORY, "calloc(%llu) failed", (unsigned long long)bytes);
  }
  b->bytes = bytes;
  *out = (gpulab_hal_buffer)(void*)b;
  return GPULAB_HAL_OK;
}

static gpulab_hal_status ext_free(void* ctx, gpulab_hal_buffer buffer, gpulab_hal_error* err) {
  ext_buffer* b = (ext_buffer*)(void*)buffer;
  (void)ctx;
  gpulab_hal_clear_error(err);
  if (b != NULL) {
    free(b->data);
    free(b);
  }
  return GPULAB_HAL_OK;
}

static gpulab_hal_status ext_range(const ext_buffer* b, uint64_t off, uint64_t bytes, gpulab_hal_error* err) {
  if (b == NULL || off > b->bytes || bytes > b->bytes - off)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "copy outside the buffer");
  return GPULAB_HAL_OK;
}

static gpulab_hal_status ext_to_device(void* ctx, gpulab_hal_buffer dst, uint64_t off, const void* src,
                                       uint64_t bytes, gpulab_hal_error* err) {
  ext_buffer* b = (ext_buffer*)(void*)dst;
  (void)ctx;
  gpulab_hal_clear_error(err);
  if (ext_range(b, off, bytes, err) != GPULAB_HAL_OK) return GPULAB_HAL_ERR_INVALID_ARGUMENT;
  if (bytes) memcpy(b->data + off, src, (size_t)bytes);
  return GPULAB_HAL_OK;
}

static gpulab_hal_status ext_to_host(void* ctx, void* dst, gpulab_hal_buffer src, uint64_t off, uint64_t bytes,
                                     gpulab_hal_error* err) {
  const ext_buffer* b = (const ext_buffer*)(const void*)src;
  (void)ctx;
  gpulab_hal_clear_error(err);
  if (ext_range(b, off, bytes, err) != GPULAB_HAL_OK) return GPULAB_HAL_ERR_INVALID_ARGUMENT;
  if (bytes) memcpy(dst, b->data + off, (size_t)bytes);
  return GPULAB_HAL_OK;
}

static gpulab_hal_status ext_matmul(void* ctx, const gpulab_hal_matmul_args* a, gpulab_hal_error* err) {
  const ext_buffer *A, *B, *C;
  uint64_t i, j, p, es;
  float* acc;
  (void)ctx;
  gpulab_hal_clear_error(err);
  if (a == NULL || a->struct_size < sizeof *a)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "matmul args missing or too small");
  if (a->dtype != GPULAB_HAL_DTYPE_F32 && a->dtype != GPULAB_HAL_DTYPE_BF16)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_UNSUPPORTED, "external does F32 and BF16 only");
  A = (const ext_buffer*)(const void*)a->a;
  B = (const ext_buffer*)(const void*)a->b;
  C = (const ext_buffer*)(const void*)a->c;
  es = gpulab_hal_dtype_size(a->dtype);
  if (A == NULL || B == NULL || C == NULL || a->m > 65536 || a->n > 65536 || a->k > 65536 ||
      A->bytes < a->m * a->k * es || B->bytes < a->k * a->n * es || C->bytes < a->m * a->n * es)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "buffers do not fit %llux%llux%llu",
                           (unsigned long long)a->m, (unsigned long long)a->n, (unsigned long long)a->k);
  acc = (float*)calloc((size_t)(a->n ? a->n : 1), sizeof(float));
  if (acc == NULL) return gpulab_hal_fail(err, GPULAB_HAL_ERR_OUT_OF_MEMORY, "calloc failed");
  for (i = 0; i < a->m; ++i) {
    memset(acc, 0, (size_t)a->n * sizeof(float));
    for (p = 0; p < a->k; ++p) {
      const float av = gpulab_hal_load(a->dtype, A->data, i * a->k + p);
      for (j = 0; j < a->n; ++j) acc[j] += av * gpulab_hal_load(a->dtype, B->data, p * a->n + j);
    }
    for (j = 0; j < a->n; ++j) gpulab_hal_store(a->dtype, C->data, i * a->n + j, acc[j]);
  }
  free(acc);
  return GPULAB_HAL_OK;
}

static gpulab_hal_status ext_describe(void* ctx, char* out, uint32_t out_size, gpulab_hal_error* err) {
  (void)ctx;
  gpulab_hal_clear_error(err);
  snprintf(out, out_size, "host CPU, built outside the gpulab tree");
  return GPULAB_HAL_OK;
}

static const gpulab_hal_backend kExternal = {
    GPULAB_HAL_ABI_VERSION,
    sizeof(gpulab_hal_backend),
    "external",
    "built separately from the core, against the installed header only",
    EXT_DTYPES,
    GPULAB_HAL_OP_BUFFER | GPULAB_HAL_OP_MATMUL,
    3,
    GPULAB_HAL_FEATURE_HOST_MEMORY,
    0,
    {0, 0, 0, 0, 0, 0, 0, 0},
    NULL,
    NULL,
    ext_alloc,
    ext_free,
    ext_to_device,
    ext_to_host,
    ext_matmul,
    NULL,
    ext_describe,
};

const gpulab_hal_backend* gpulab_hal_backend_register(void) { return &kExternal; }
