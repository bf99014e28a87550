/* The descriptor as ABI v2.0 shipped it (frozen): everything up to softmax,
 * no describe_device. The other types (error, buffers, argument structs) have
 * not changed since 2.0, so they come from the current header. A backend built
 * against this is "an old-minor backend" for the v2.2 core. */
#ifndef GPULAB_HAL_V2_0_H
#define GPULAB_HAL_V2_0_H

#include <gpulab_hal/gpulab_hal.h>

#define GPULAB_HAL_V2_0_VERSION GPULAB_HAL_MAKE_VERSION(2u, 0u)

typedef struct gpulab_hal_backend_v2_0 {
  uint32_t abi_version;
  uint32_t struct_size;
  const char* name;
  const char* description;
  uint32_t dtypes;
  uint32_t ops;
  uint32_t perf_hint;
  uint32_t features;
  uint64_t max_dim;
  uint32_t reserved[8];
  gpulab_hal_status (*init)(void** ctx, gpulab_hal_error* err);
  void (*shutdown)(void* ctx);
  gpulab_hal_status (*buffer_alloc)(void* ctx, uint64_t bytes, gpulab_hal_buffer* out, gpulab_hal_error* err);
  gpulab_hal_status (*buffer_free)(void* ctx, gpulab_hal_buffer buffer, gpulab_hal_error* err);
  gpulab_hal_status (*copy_to_device)(void* ctx, gpulab_hal_buffer dst, uint64_t dst_offset, const void* src,
                                      uint64_t bytes, gpulab_hal_error* err);
  gpulab_hal_status (*copy_to_host)(void* ctx, void* dst, gpulab_hal_buffer src, uint64_t src_offset,
                                    uint64_t bytes, gpulab_hal_error* err);
  gpulab_hal_status (*matmul)(void* ctx, const gpulab_hal_matmul_args* args, gpulab_hal_error* err);
  gpulab_hal_status (*softmax)(void* ctx, const gpulab_hal_softmax_args* args, gpulab_hal_error* err);
} gpulab_hal_backend_v2_0;

_Static_assert(sizeof(gpulab_hal_backend_v2_0) == 144, "v2.0 is 144 bytes");

#endif
