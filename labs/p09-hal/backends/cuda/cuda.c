/* cuda — the NVIDIA vendor-library backend: device buffers from cudaMalloc,
 * matmul through cuBLAS (cublasSgemm for F32, cublasGemmEx with F32
 * accumulation for F16 and BF16). Without a GPU (or a driver) init() returns
 * GPULAB_HAL_ERR_NO_DEVICE with the CUDA runtime's own words, and the core
 * reports the backend instead of using it. Plain C against the CUDA runtime
 * API; the ABI 2.2 decoder-layer ops are CUDA kernels (layer_kernels.cu),
 * built and declared only when nvcc is found (GPULAB_HAL_CUDA_KERNELS). */
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#include <gpulab_hal/gpulab_hal.h>

#include "../common/copy_check.h"
#if GPULAB_HAL_CUDA_KERNELS
#include <gpulab_hal/gpulab_hal_layer_checks.h>

#include "layer_kernels.h"
#define CUDA_OPS (GPULAB_HAL_OP_BUFFER | GPULAB_HAL_OP_MATMUL | GPULAB_HAL_OP_RMSNORM | GPULAB_HAL_OP_ROPE | \
                  GPULAB_HAL_OP_SILU_MUL | GPULAB_HAL_OP_PAGED_ATTENTION)
#else
#define CUDA_OPS (GPULAB_HAL_OP_BUFFER | GPULAB_HAL_OP_MATMUL)
#endif

#define CUDA_DTYPES (GPULAB_HAL_DTYPE_F32 | GPULAB_HAL_DTYPE_F16 | GPULAB_HAL_DTYPE_BF16)

typedef struct cuda_ctx {
  int device;
  cublasHandle_t blas;
  char device_line[320];
} cuda_ctx;

typedef struct cuda_buffer {
  void* ptr;
  uint64_t bytes;
} cuda_buffer;

static gpulab_hal_status cuda_fail(gpulab_hal_error* err, const char* what, cudaError_t e) {
  return gpulab_hal_fail(err, e == cudaErrorMemoryAllocation ? GPULAB_HAL_ERR_OUT_OF_MEMORY : GPULAB_HAL_ERR_DEVICE,
                         "%s: %s", what, cudaGetErrorString(e));
}

static gpulab_hal_status cuda_init(void** out, gpulab_hal_error* err) {
  int count = 0;
  cudaError_t e;
  cublasStatus_t bs;
  struct cudaDeviceProp prop;
  cuda_ctx* c;
  gpulab_hal_clear_error(err);
  e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError(); /* clear the sticky error */
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_NO_DEVICE, "no CUDA device (cudaGetDeviceCount: %s)",
                           e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
  }
  c = (cuda_ctx*)calloc(1, sizeof *c);
  if (c == NULL) return gpulab_hal_fail(err, GPULAB_HAL_ERR_OUT_OF_MEMORY, "calloc failed");
  c->device = 0;
  e = cudaSetDevice(0);
  if (e != cudaSuccess) {
    free(c);
    return cuda_fail(err, "cudaSetDevice(0)", e);
  }
  bs = cublasCreate(&c->blas);
  if (bs != CUBLAS_STATUS_SUCCESS) {
    free(c);
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_DEVICE, "cublasCreate failed: status %d", (int)bs);
  }
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
    snprintf(c->device_line, sizeof c->device_line, "CUDA device 0: %s (sm_%d%d), cuBLAS", prop.name, prop.major,
             prop.minor);
  else
    snprintf(c->device_line, sizeof c->device_line, "CUDA device 0, cuBLAS");
  *out = c;
  return GPULAB_HAL_OK;
}

static void cuda_shutdown(void* vctx) {
  cuda_ctx* c = (cuda_ctx*)vctx;
  if (c == NULL) return;
  cublasDestroy(c->blas);
  free(c);
}

static gpulab_hal_status cuda_alloc(void* vctx, uint64_t bytes, gpulab_hal_buffer* out, gpulab_hal_error* err) {
  cuda_buffer* b;
  cudaError_t e;
  (void)vctx;
  gpulab_hal_clear_error(err);
  if (out == NULL) return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "out is NULL");
  *out = NULL;
  b = (cuda_buffer*)calloc(1, sizeof *b);
  if (b == NULL) return gpulab_hal_fail(err, GPULAB_HAL_ERR_OUT_OF_MEMORY, "calloc failed");
  b->bytes = bytes;
  e = cudaMalloc(&b->ptr, (size_t)(bytes ? bytes : 256));
  if (e != cudaSuccess) {
    free(b);
    return cuda_fail(err, "cudaMalloc", e);
  }
  *out = (gpulab_hal_buffer)(void*)b;
  return GPULAB_HAL_OK;
}

static gpulab_hal_status cuda_free_buffer(void* vctx, gpulab_hal_buffer buffer, gpulab_hal_error* err) {
  cuda_buffer* b = (cuda_buffer*)(void*)buffer;
  (void)vctx;
  gpulab_hal_clear_error(err);
  if (b == NULL) return GPULAB_HAL_OK;
  cudaFree(b->ptr);
  free(b);
  return GPULAB_HAL_OK;
}

static gpulab_hal_status check_range(const cuda_buffer* b, uint64_t off, uint64_t bytes, const void* host,
                                     gpulab_hal_error* err) {
  return hal_check_copy(b != NULL, b != NULL ? b->bytes : 0, off, bytes, host, err);
}

static gpulab_hal_status cuda_to_device(void* vctx, gpulab_hal_buffer dst, uint64_t off, const void* src,
                                        uint64_t bytes, gpulab_hal_error* err) {
  const cuda_buffer* b = (const cuda_buffer*)(const void*)dst;
  gpulab_hal_status st;
  cudaError_t e;
  (void)vctx;
  gpulab_hal_clear_error(err);
  st = check_range(b, off, bytes, src, err);
  if (st != GPULAB_HAL_OK || bytes == 0) return st;
  e = cudaMemcpy((char*)b->ptr + off, src, (size_t)bytes, cudaMemcpyHostToDevice);
  return e == cudaSuccess ? GPULAB_HAL_OK : cuda_fail(err, "cudaMemcpy(H2D)", e);
}

static gpulab_hal_status cuda_to_host(void* vctx, void* dst, gpulab_hal_buffer src, uint64_t off, uint64_t bytes,
                                      gpulab_hal_error* err) {
  const cuda_buffer* b = (const cuda_buffer*)(const void*)src;
  gpulab_hal_status st;
  cudaError_t e;
  (void)vctx;
  gpulab_hal_clear_error(err);
  st = check_range(b, off, bytes, dst, err);
  if (st != GPULAB_HAL_OK || bytes == 0) return st;
  e = cudaMemcpy(dst, (const char*)b->ptr + off, (size_t)bytes, cudaMemcpyDeviceToHost);
  return e == cudaSuccess ? GPULAB_HAL_OK : cuda_fail(err, "cudaMemcpy(D2H)", e);
}

static gpulab_hal_status cuda_matmul(void* vctx, const gpulab_hal_matmul_args* a, gpulab_hal_error* err) {
  cuda_ctx* c = (cuda_ctx*)vctx;
  const cuda_buffer *A, *B, *C;
  const float one = 1.0f, zero = 0.0f;
  uint64_t es;
  cublasStatus_t bs;
  cudaError_t e;
  int m, n, k;
  gpulab_hal_clear_error(err);
  if (a == NULL || a->struct_size < sizeof(gpulab_hal_matmul_args))
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "matmul args missing or too small");
  if ((a->dtype & CUDA_DTYPES) == 0 || (a->dtype & (a->dtype - 1u)) != 0)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_UNSUPPORTED, "dtype mask 0x%x is not one declared dtype", (unsigned)a->dtype);
  A = (const cuda_buffer*)(const void*)a->a;
  B = (const cuda_buffer*)(const void*)a->b;
  C = (const cuda_buffer*)(const void*)a->c;
  if (A == NULL || B == NULL || C == NULL) return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "a NULL buffer");
  if (a->m > 0x7FFFFFFFu || a->n > 0x7FFFFFFFu || a->k > 0x7FFFFFFFu)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "cuBLAS takes 32-bit dimensions");
  es = gpulab_hal_dtype_size(a->dtype);
  if (A->bytes < a->m * a->k * es || B->bytes < a->k * a->n * es || C->bytes < a->m * a->n * es)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "a buffer is too small for %llux%llux%llu",
                           (unsigned long long)a->m, (unsigned long long)a->n, (unsigned long long)a->k);
  if (a->m == 0 || a->n == 0) return GPULAB_HAL_OK;
  if (a->k == 0) {
    e = cudaMemset(C->ptr, 0, (size_t)(a->m * a->n * es));
    return e == cudaSuccess ? GPULAB_HAL_OK : cuda_fail(err, "cudaMemset", e);
  }
  m = (int)a->m;
  n = (int)a->n;
  k = (int)a->k;
  /* Row-major C = A B is column-major C^T = B^T A^T: swap the operands. */
  if (a->dtype == GPULAB_HAL_DTYPE_F32) {
    bs = cublasSgemm(c->blas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, (const float*)B->ptr, n, (const float*)A->ptr,
                     k, &zero, (float*)C->ptr, n);
  } else {
    const cudaDataType_t t = a->dtype == GPULAB_HAL_DTYPE_F16 ? CUDA_R_16F : CUDA_R_16BF;
    bs = cublasGemmEx(c->blas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, B->ptr, t, n, A->ptr, t, k, &zero, C->ptr, t, n,
                      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  }
  if (bs != CUBLAS_STATUS_SUCCESS)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_DEVICE, "cuBLAS gemm failed: status %d", (int)bs);
  e = cudaDeviceSynchronize();
  return e == cudaSuccess ? GPULAB_HAL_OK : cuda_fail(err, "cudaDeviceSynchronize", e);
}

#if GPULAB_HAL_CUDA_KERNELS
/* ---- ABI 2.2 -------------------------------------------------------------- */
static uint64_t cu_bytes(gpulab_hal_buffer b) { return b ? ((const cuda_buffer*)(const void*)b)->bytes : 0; }
static void* cu_ptr(gpulab_hal_buffer b) { return ((const cuda_buffer*)(const void*)b)->ptr; }

static gpulab_hal_status kernel_status(int e, const char* what, gpulab_hal_error* err) {
  return e == 0 ? GPULAB_HAL_OK : cuda_fail(err, what, (cudaError_t)e);
}

/* Grid limits the kernels launch with: rows on grid x (2^31 - 1), heads on
 * grid y (65535), head_dim in registers. */
#define CUDA_MAX_ROWS 0x7FFFFFFFull

static gpulab_hal_status cuda_rmsnorm(void* vctx, const gpulab_hal_rmsnorm_args* a, gpulab_hal_error* err) {
  gpulab_hal_status st;
  (void)vctx;
  gpulab_hal_clear_error(err);
  if (a != NULL && a->struct_size >= sizeof *a && (a->in == NULL || a->weight == NULL || a->out == NULL))
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "rmsnorm: a NULL buffer");
  st = hal_check_rmsnorm(a, CUDA_DTYPES, a ? cu_bytes(a->in) : 0, a ? cu_bytes(a->weight) : 0,
                         a ? cu_bytes(a->out) : 0, err);
  if (st != GPULAB_HAL_OK) return st;
  if (a->rows > CUDA_MAX_ROWS) return gpulab_hal_fail(err, GPULAB_HAL_ERR_UNSUPPORTED, "rmsnorm: more than 2^31 - 1 rows");
  return kernel_status(gpulab_cuda_rmsnorm(a, cu_ptr(a->in), cu_ptr(a->weight), cu_ptr(a->out)), "rmsnorm kernel", err);
}

static gpulab_hal_status cuda_rope(void* vctx, const gpulab_hal_rope_args* a, gpulab_hal_error* err) {
  gpulab_hal_status st;
  (void)vctx;
  gpulab_hal_clear_error(err);
  if (a != NULL && a->struct_size >= sizeof *a &&
      (a->x == NULL || a->positions == NULL || a->cos_table == NULL || a->sin_table == NULL))
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "rope: a NULL buffer");
  st = hal_check_rope(a, CUDA_DTYPES, a ? cu_bytes(a->x) : 0, a ? cu_bytes(a->positions) : 0,
                      a ? cu_bytes(a->cos_table) : 0, a ? cu_bytes(a->sin_table) : 0, err);
  if (st != GPULAB_HAL_OK) return st;
  if (a->rows * a->heads * (a->head_dim / 2u) / 128u > CUDA_MAX_ROWS)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_UNSUPPORTED, "rope: too many elements for one launch");
  return kernel_status(gpulab_cuda_rope(a, cu_ptr(a->x), (const int32_t*)cu_ptr(a->positions),
                                        (const float*)cu_ptr(a->cos_table), (const float*)cu_ptr(a->sin_table)),
                       "rope kernel", err);
}

static gpulab_hal_status cuda_silu_mul(void* vctx, const gpulab_hal_silu_mul_args* a, gpulab_hal_error* err) {
  gpulab_hal_status st;
  (void)vctx;
  gpulab_hal_clear_error(err);
  if (a != NULL && a->struct_size >= sizeof *a && (a->in == NULL || a->out == NULL))
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "silu_mul: a NULL buffer");
  st = hal_check_silu_mul(a, CUDA_DTYPES, a ? cu_bytes(a->in) : 0, a ? cu_bytes(a->out) : 0, err);
  if (st != GPULAB_HAL_OK) return st;
  if (a->rows * a->cols / 128u > CUDA_MAX_ROWS)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_UNSUPPORTED, "silu_mul: too many elements for one launch");
  return kernel_status(gpulab_cuda_silu_mul(a, cu_ptr(a->in), cu_ptr(a->out)), "silu_mul kernel", err);
}

static gpulab_hal_status cuda_paged_attention(void* vctx, const gpulab_hal_paged_attention_args* a,
                                              gpulab_hal_error* err) {
  gpulab_hal_status st;
  uint64_t bytes[7] = {0, 0, 0, 0, 0, 0, 0};
  (void)vctx;
  gpulab_hal_clear_error(err);
  if (a != NULL && a->struct_size >= sizeof *a) {
    const gpulab_hal_buffer b[7] = {a->q, a->k_cache, a->v_cache, a->block_table, a->seq_ids, a->positions, a->out};
    int i;
    for (i = 0; i < 7; ++i) {
      if (b[i] == NULL) return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "paged_attention: a NULL buffer");
      bytes[i] = cu_bytes(b[i]);
    }
  }
  st = hal_check_paged_attention(a, CUDA_DTYPES, bytes, err);
  if (st != GPULAB_HAL_OK) return st;
  if (a->head_dim > GPULAB_HAL_CUDA_MAX_HEAD_DIM || a->q_heads > 65535u || a->rows > CUDA_MAX_ROWS)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_UNSUPPORTED,
                           "paged_attention: this kernel takes head_dim <= %u, q_heads <= 65535, rows < 2^31",
                           GPULAB_HAL_CUDA_MAX_HEAD_DIM);
  return kernel_status(gpulab_cuda_paged_attention(a, cu_ptr(a->q), cu_ptr(a->k_cache), cu_ptr(a->v_cache),
                                                   (const int32_t*)cu_ptr(a->block_table),
                                                   (const int32_t*)cu_ptr(a->seq_ids),
                                                   (const int32_t*)cu_ptr(a->positions), cu_ptr(a->out)),
                       "paged_attention kernel", err);
}
#define CUDA_RMSNORM cuda_rmsnorm
#define CUDA_ROPE cuda_rope
#define CUDA_SILU_MUL cuda_silu_mul
#define CUDA_PAGED_ATTENTION cuda_paged_attention
#else
#define CUDA_RMSNORM NULL
#define CUDA_ROPE NULL
#define CUDA_SILU_MUL NULL
#define CUDA_PAGED_ATTENTION NULL
#endif

static gpulab_hal_status cuda_describe(void* vctx, char* out, uint32_t out_size, gpulab_hal_error* err) {
  const cuda_ctx* c = (const cuda_ctx*)vctx;
  gpulab_hal_clear_error(err);
  snprintf(out, out_size, "%s", c->device_line);
  return GPULAB_HAL_OK;
}

static const gpulab_hal_backend kCuda = {
    GPULAB_HAL_ABI_VERSION,
    sizeof(gpulab_hal_backend),
    "cuda",
    "cuBLAS on an NVIDIA GPU",
    CUDA_DTYPES,
    CUDA_OPS,
    100,
    GPULAB_HAL_FEATURE_VENDOR_LIB | GPULAB_HAL_FEATURE_NOT_UNLOADABLE,
    0,
    {0, 0, 0, 0, 0, 0, 0, 0},
    cuda_init,
    cuda_shutdown,
    cuda_alloc,
    cuda_free_buffer,
    cuda_to_device,
    cuda_to_host,
    cuda_matmul,
    NULL,
    cuda_describe,
    CUDA_RMSNORM,
    CUDA_ROPE,
    CUDA_SILU_MUL,
    CUDA_PAGED_ATTENTION,
};

const gpulab_hal_backend* gpulab_hal_backend_register(void) { return &kCuda; }
