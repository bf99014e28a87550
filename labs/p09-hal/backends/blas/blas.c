/* blas — the vendor-library posture on the CPU: the backend is a thin shim
 * over CBLAS (OpenBLAS from Debian), the way a vendor backend wraps cuBLAS or
 * rocBLAS. Row-major sgemm; the HAL adds one indirect call and the argument
 * checks, which the bench compares against calling OpenBLAS directly. */
#include <cblas.h>

#include "../common/host_backend.h"

static gpulab_hal_status blas_matmul(void* ctx, const gpulab_hal_matmul_args* a, gpulab_hal_error* err) {
  const gpulab_hal_status st = host_check_matmul(a, GPULAB_HAL_DTYPE_F32, 0, err);
  (void)ctx;
  if (st != GPULAB_HAL_OK) return st;
  if (a->m == 0 || a->n == 0) return GPULAB_HAL_OK;
  if (a->m > 0x7FFFFFFFu || a->n > 0x7FFFFFFFu || a->k > 0x7FFFFFFFu)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "CBLAS takes 32-bit dimensions");
  if (a->k == 0) { /* C = 0*A*B + 0*C: write the zeros without asking BLAS about k = 0 */
    memset(host_data(a->c), 0, (size_t)(a->m * a->n * sizeof(float)));
    return GPULAB_HAL_OK;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)a->m, (blasint)a->n, (blasint)a->k, 1.0f,
              (const float*)host_data(a->a), (blasint)a->k, (const float*)host_data(a->b), (blasint)a->n, 0.0f,
              (float*)host_data(a->c), (blasint)a->n);
  return GPULAB_HAL_OK;
}

static gpulab_hal_status blas_describe(void* ctx, char* out, uint32_t out_size, gpulab_hal_error* err) {
  (void)ctx;
  gpulab_hal_clear_error(err);
  /* ", core NAME," is the kernel set OpenBLAS picked at load (hal/openblas_core.hpp
   * reads it back to judge whether the peer is fair on this CPU). */
  snprintf(out, out_size, "%s, core %s, %d threads", openblas_get_config(), openblas_get_corename(),
           openblas_get_num_threads());
  return GPULAB_HAL_OK;
}

static const gpulab_hal_backend kBlas = {
    /* Stays at ABI 2.1 (version and size as a 2.1 build wrote them): the
     * core must keep loading it and read the 2.2 ops as not declared. */
    GPULAB_HAL_MAKE_VERSION(2u, 1u),
    GPULAB_HAL_DESCRIPTOR_SIZE_V2_1,
    "blas",
    "CBLAS sgemm (OpenBLAS), the vendor-library posture",
    GPULAB_HAL_DTYPE_F32,
    GPULAB_HAL_OP_BUFFER | GPULAB_HAL_OP_MATMUL,
    30,
    GPULAB_HAL_FEATURE_HOST_MEMORY | GPULAB_HAL_FEATURE_THREADED | GPULAB_HAL_FEATURE_VENDOR_LIB,
    0,
    {0, 0, 0, 0, 0, 0, 0, 0},
    NULL,
    NULL,
    host_buffer_alloc,
    host_buffer_free,
    host_copy_to_device,
    host_copy_to_host,
    blas_matmul,
    NULL,
    blas_describe,
    /* past the 2.1 size: the core never reads these */
    NULL,
    NULL,
    NULL,
    NULL,
};

const gpulab_hal_backend* gpulab_hal_backend_register(void) { return &kBlas; }
