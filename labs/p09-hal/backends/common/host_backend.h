/* host_backend.h — what every backend that keeps its buffers in host RAM
 * shares: the four buffer functions and the argument checks every compute op
 * repeats. Everything is static: each backend .so gets its own hidden copy,
 * and the backend still exports nothing but gpulab_hal_backend_register. */
#ifndef GPULAB_HAL_HOST_BACKEND_H
#define GPULAB_HAL_HOST_BACKEND_H

#include <gpulab_hal/gpulab_hal.h>
#include <math.h>

#include "copy_check.h"
#include <stdlib.h>
#include <string.h>

typedef struct host_buffer {
  uint64_t bytes;
  void* data; /* 64-byte aligned, at least 64 bytes */
} host_buffer;

static inline void* host_data(gpulab_hal_buffer b) { return ((host_buffer*)(void*)b)->data; }
static inline uint64_t host_bytes(gpulab_hal_buffer b) { return ((host_buffer*)(void*)b)->bytes; }

static inline gpulab_hal_status host_buffer_alloc(void* ctx, uint64_t bytes, gpulab_hal_buffer* out,
                                                  gpulab_hal_error* err) {
  host_buffer* b;
  uint64_t rounded;
  (void)ctx;
  gpulab_hal_clear_error(err);
  if (out == NULL) return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "out is NULL");
  *out = NULL;
  if (bytes > ((uint64_t)1 << 40))
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_OUT_OF_MEMORY, "%llu bytes is more than this backend allocates",
                           (unsigned long long)bytes);
  rounded = (bytes + 63u) / 64u * 64u;
  if (rounded == 0) rounded = 64;
  b = (host_buffer*)malloc(sizeof *b);
  if (b == NULL) return gpulab_hal_fail(err, GPULAB_HAL_ERR_OUT_OF_MEMORY, "malloc failed");
  b->bytes = bytes;
  b->data = aligned_alloc(64, (size_t)rounded);
  if (b->data == NULL) {
    free(b);
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_OUT_OF_MEMORY, "aligned_alloc(%llu) failed",
                           (unsigned long long)rounded);
  }
  *out = (gpulab_hal_buffer)(void*)b;
  return GPULAB_HAL_OK;
}

static inline gpulab_hal_status host_buffer_free(void* ctx, gpulab_hal_buffer buffer, gpulab_hal_error* err) {
  host_buffer* b = (host_buffer*)(void*)buffer;
  (void)ctx;
  gpulab_hal_clear_error(err);
  if (b == NULL) return GPULAB_HAL_OK;
  free(b->data);
  free(b);
  return GPULAB_HAL_OK;
}

static inline gpulab_hal_status host_check_range(gpulab_hal_buffer buf, uint64_t offset, uint64_t bytes,
                                                 const void* host, gpulab_hal_error* err) {
  return hal_check_copy(buf != NULL, buf != NULL ? host_bytes(buf) : 0, offset, bytes, host, err);
}

static inline gpulab_hal_status host_copy_to_device(void* ctx, gpulab_hal_buffer dst, uint64_t dst_offset,
                                                    const void* src, uint64_t bytes, gpulab_hal_error* err) {
  gpulab_hal_status st;
  (void)ctx;
  gpulab_hal_clear_error(err);
  st = host_check_range(dst, dst_offset, bytes, src, err);
  if (st != GPULAB_HAL_OK) return st;
  if (bytes != 0) memcpy((unsigned char*)host_data(dst) + dst_offset, src, (size_t)bytes);
  return GPULAB_HAL_OK;
}

static inline gpulab_hal_status host_copy_to_host(void* ctx, void* dst, gpulab_hal_buffer src, uint64_t src_offset,
                                                  uint64_t bytes, gpulab_hal_error* err) {
  gpulab_hal_status st;
  (void)ctx;
  gpulab_hal_clear_error(err);
  st = host_check_range(src, src_offset, bytes, dst, err);
  if (st != GPULAB_HAL_OK) return st;
  if (bytes != 0) memcpy(dst, (const unsigned char*)host_data(src) + src_offset, (size_t)bytes);
  return GPULAB_HAL_OK;
}

/* The checks a matmul repeats whatever backend it is: argument struct size,
 * one declared dtype, the max_dim limit, buffers large enough. */
static inline gpulab_hal_status host_check_matmul(const gpulab_hal_matmul_args* a, uint32_t declared,
                                                  uint64_t max_dim, gpulab_hal_error* err) {
  uint64_t es;
  gpulab_hal_clear_error(err);
  if (a == NULL || a->struct_size < sizeof(gpulab_hal_matmul_args))
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "matmul args missing or too small");
  if ((a->dtype & declared) == 0 || (a->dtype & (a->dtype - 1u)) != 0)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_UNSUPPORTED, "dtype mask 0x%x is not one declared dtype",
                           (unsigned)a->dtype);
  if (max_dim != 0 && (a->m > max_dim || a->n > max_dim || a->k > max_dim))
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_UNSUPPORTED, "a dimension of %llux%llux%llu exceeds max_dim %llu",
                           (unsigned long long)a->m, (unsigned long long)a->n, (unsigned long long)a->k,
                           (unsigned long long)max_dim);
  if (a->m > 0xFFFFFFFFu || a->n > 0xFFFFFFFFu || a->k > 0xFFFFFFFFu)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "dimension above 2^32");
  if (a->a == NULL || a->b == NULL || a->c == NULL)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "a NULL buffer");
  es = gpulab_hal_dtype_size(a->dtype);
  if (host_bytes(a->a) < a->m * a->k * es || host_bytes(a->b) < a->k * a->n * es ||
      host_bytes(a->c) < a->m * a->n * es)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "a buffer is too small for %llux%llux%llu",
                           (unsigned long long)a->m, (unsigned long long)a->n, (unsigned long long)a->k);
  return GPULAB_HAL_OK;
}

static inline gpulab_hal_status host_check_softmax(const gpulab_hal_softmax_args* a, uint32_t declared,
                                                   uint64_t max_dim, gpulab_hal_error* err) {
  uint64_t es;
  gpulab_hal_clear_error(err);
  if (a == NULL || a->struct_size < sizeof(gpulab_hal_softmax_args))
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "softmax args missing or too small");
  if ((a->dtype & declared) == 0 || (a->dtype & (a->dtype - 1u)) != 0)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_UNSUPPORTED, "dtype mask 0x%x is not one declared dtype",
                           (unsigned)a->dtype);
  if (max_dim != 0 && (a->rows > max_dim || a->cols > max_dim))
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_UNSUPPORTED, "%llux%llu exceeds max_dim %llu",
                           (unsigned long long)a->rows, (unsigned long long)a->cols, (unsigned long long)max_dim);
  if (a->rows > 0xFFFFFFFFu || a->cols > 0xFFFFFFFFu)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "dimension above 2^32");
  if (a->in == NULL || a->out == NULL)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "a NULL buffer");
  es = gpulab_hal_dtype_size(a->dtype);
  if (host_bytes(a->in) < a->rows * a->cols * es || host_bytes(a->out) < a->rows * a->cols * es)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "a buffer is too small for %llux%llu",
                           (unsigned long long)a->rows, (unsigned long long)a->cols);
  return GPULAB_HAL_OK;
}

/* Straightforward row-wise softmax in binary32 over any dtype (reference quality).
 * in == out is fine: each row is read fully before it is written. */
static inline void host_softmax_rows(uint32_t dtype, const void* in, void* out, uint64_t rows, uint64_t cols) {
  uint64_t r, c;
  for (r = 0; r < rows; ++r) {
    float mx = -INFINITY, sum = 0.0f;
    for (c = 0; c < cols; ++c) {
      const float v = gpulab_hal_load(dtype, in, r * cols + c);
      if (v > mx) mx = v;
    }
    for (c = 0; c < cols; ++c) sum += expf(gpulab_hal_load(dtype, in, r * cols + c) - mx);
    for (c = 0; c < cols; ++c)
      gpulab_hal_store(dtype, out, r * cols + c, expf(gpulab_hal_load(dtype, in, r * cols + c) - mx) / sum);
  }
}

#endif /* GPULAB_HAL_HOST_BACKEND_H */
