/* layer_kernels.h — the cuda backend's ABI 2.2 kernels (layer_kernels.cu),
 * called from cuda.c with device pointers after the shared argument checks.
 * Each launches on the default stream, waits, and returns the cudaError_t
 * of the launch or the wait as an int (0 = cudaSuccess). `dtype` is one
 * GPULAB_HAL_DTYPE_* bit of F32, F16 or BF16; indices are checked in the
 * kernels, and a bad one turns its row into NaN (gpulab_hal.h). */
#ifndef GPULAB_HAL_CUDA_LAYER_KERNELS_H
#define GPULAB_HAL_CUDA_LAYER_KERNELS_H

#include <gpulab_hal/gpulab_hal.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The largest head_dim the attention kernel keeps in registers. */
#define GPULAB_HAL_CUDA_MAX_HEAD_DIM 512u

int gpulab_cuda_rmsnorm(const gpulab_hal_rmsnorm_args* a, const void* in, const void* weight, void* out);
int gpulab_cuda_rope(const gpulab_hal_rope_args* a, void* x, const int32_t* positions, const float* cos_table,
                     const float* sin_table);
int gpulab_cuda_silu_mul(const gpulab_hal_silu_mul_args* a, const void* in, void* out);
int gpulab_cuda_paged_attention(const gpulab_hal_paged_attention_args* a, const void* q, const void* k_cache,
                                const void* v_cache, const int32_t* block_table, const int32_t* seq_ids,
                                const int32_t* positions, void* out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GPULAB_HAL_CUDA_LAYER_KERNELS_H */
