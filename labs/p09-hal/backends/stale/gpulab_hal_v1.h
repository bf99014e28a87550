/* gpulab_hal_v1.h — the RETIRED version 1 of the backend ABI, kept frozen so
 * the `stale` backend can be built exactly as a year-old vendor backend was.
 * Do not use for new backends. The differences that make v2 a new major:
 * no struct_size field (the core could not tell how much it may read),
 * host float pointers instead of buffers, no error channel, a plain int perf. */
#ifndef GPULAB_HAL_V1_H
#define GPULAB_HAL_V1_H

#include <stdint.h>

#define GPULAB_HAL_V1_ABI_VERSION 0x00010000u /* major 1, minor 0 */
#define GPULAB_HAL_V1_DTYPE_F32 1u

typedef struct gpulab_hal_v1_backend {
  uint32_t abi_version;
  const char* name;
  uint32_t dtypes;
  int perf;
  int (*matmul)(const float* a, const float* b, float* c, int m, int n, int k);
} gpulab_hal_v1_backend;

__attribute__((visibility("default"))) const gpulab_hal_v1_backend* gpulab_hal_backend_register(void);

#endif
