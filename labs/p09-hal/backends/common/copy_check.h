/* copy_check.h — the bounds check every backend's copy_to_device and
 * copy_to_host repeat, whatever a buffer is (host memory, cl_mem, a CUDA
 * pointer). Static inline: nothing is exported. */
#ifndef GPULAB_HAL_COPY_CHECK_H
#define GPULAB_HAL_COPY_CHECK_H

#include <gpulab_hal/gpulab_hal.h>

/* `have_buffer` is false for a NULL handle; `buffer_bytes` is its size. */
static inline gpulab_hal_status hal_check_copy(int have_buffer, uint64_t buffer_bytes, uint64_t offset, uint64_t bytes,
                                               const void* host, gpulab_hal_error* err) {
  if (!have_buffer) return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "buffer is NULL");
  if (bytes != 0 && host == NULL) return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "host pointer is NULL");
  if (offset > buffer_bytes || bytes > buffer_bytes - offset)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT,
                           "copy of %llu bytes at offset %llu overruns a %llu-byte buffer", (unsigned long long)bytes,
                           (unsigned long long)offset, (unsigned long long)buffer_bytes);
  return GPULAB_HAL_OK;
}

#endif /* GPULAB_HAL_COPY_CHECK_H */
