/* host_layer_ops.h — the ABI v2.2 decoder-layer ops over host buffers, in the
 * plainest form: one row (one head) at a time, binary32 arithmetic, any dtype
 * through gpulab_hal_load/store. cpu_ref uses them as they are; fast uses them
 * for the dtypes its vector paths do not cover, on row ranges per thread
 * (every function takes [r0, r1)). Static inline: nothing is exported. */
#ifndef GPULAB_HAL_HOST_LAYER_OPS_H
#define GPULAB_HAL_HOST_LAYER_OPS_H

#include <gpulab_hal/gpulab_hal_layer_checks.h>
#include <math.h>

#include "host_backend.h"

/* Full argument and index checks of each op on host buffers. */
static inline gpulab_hal_status host_check_rmsnorm(const gpulab_hal_rmsnorm_args* a, uint32_t declared,
                                                   gpulab_hal_error* err) {
  gpulab_hal_clear_error(err);
  if (a != NULL && (a->in == NULL || a->weight == NULL || a->out == NULL))
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "rmsnorm: a NULL buffer");
  return hal_check_rmsnorm(a, declared, a ? host_bytes(a->in) : 0, a ? host_bytes(a->weight) : 0,
                           a ? host_bytes(a->out) : 0, err);
}

static inline gpulab_hal_status host_check_rope(const gpulab_hal_rope_args* a, uint32_t declared,
                                                gpulab_hal_error* err) {
  gpulab_hal_status st;
  gpulab_hal_clear_error(err);
  if (a != NULL && (a->x == NULL || a->positions == NULL || a->cos_table == NULL || a->sin_table == NULL))
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "rope: a NULL buffer");
  st = hal_check_rope(a, declared, a ? host_bytes(a->x) : 0, a ? host_bytes(a->positions) : 0,
                      a ? host_bytes(a->cos_table) : 0, a ? host_bytes(a->sin_table) : 0, err);
  if (st != GPULAB_HAL_OK) return st;
  return hal_check_rope_indices(a, (const int32_t*)host_data(a->positions), err);
}

static inline gpulab_hal_status host_check_silu_mul(const gpulab_hal_silu_mul_args* a, uint32_t declared,
                                                    gpulab_hal_error* err) {
  gpulab_hal_clear_error(err);
  if (a != NULL && (a->in == NULL || a->out == NULL))
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "silu_mul: a NULL buffer");
  return hal_check_silu_mul(a, declared, a ? host_bytes(a->in) : 0, a ? host_bytes(a->out) : 0, err);
}

static inline gpulab_hal_status host_check_paged_attention(const gpulab_hal_paged_attention_args* a,
                                                           uint32_t declared, gpulab_hal_error* err) {
  gpulab_hal_status st;
  uint64_t bytes[7];
  gpulab_hal_clear_error(err);
  if (a == NULL || a->struct_size < sizeof(gpulab_hal_paged_attention_args))
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "paged_attention args missing or too small");
  if (a->q == NULL || a->k_cache == NULL || a->v_cache == NULL || a->block_table == NULL || a->seq_ids == NULL ||
      a->positions == NULL || a->out == NULL)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "paged_attention: a NULL buffer");
  bytes[0] = host_bytes(a->q);
  bytes[1] = host_bytes(a->k_cache);
  bytes[2] = host_bytes(a->v_cache);
  bytes[3] = host_bytes(a->block_table);
  bytes[4] = host_bytes(a->seq_ids);
  bytes[5] = host_bytes(a->positions);
  bytes[6] = host_bytes(a->out);
  st = hal_check_paged_attention(a, declared, bytes, err);
  if (st != GPULAB_HAL_OK) return st;
  return hal_check_attention_indices(a, (const int32_t*)host_data(a->block_table),
                                     (const int32_t*)host_data(a->seq_ids), (const int32_t*)host_data(a->positions),
                                     err);
}

static inline void host_rmsnorm_rows(const gpulab_hal_rmsnorm_args* a, uint64_t r0, uint64_t r1) {
  const uint32_t dt = a->dtype;
  const void* in = host_data(a->in);
  const void* w = host_data(a->weight);
  void* out = host_data(a->out);
  uint64_t r, c;
  for (r = r0; r < r1; ++r) {
    float ss = 0.0f, inv;
    for (c = 0; c < a->cols; ++c) {
      const float v = gpulab_hal_load(dt, in, r * a->cols + c);
      ss += v * v;
    }
    inv = 1.0f / sqrtf(ss / (float)(a->cols ? a->cols : 1) + a->eps);
    for (c = 0; c < a->cols; ++c)
      gpulab_hal_store(dt, out, r * a->cols + c,
                       gpulab_hal_load(dt, in, r * a->cols + c) * inv * gpulab_hal_load(dt, w, c));
  }
}

static inline void host_rope_rows(const gpulab_hal_rope_args* a, uint64_t r0, uint64_t r1) {
  const uint32_t dt = a->dtype;
  const uint64_t half = a->head_dim / 2u;
  const int32_t* pos = (const int32_t*)host_data(a->positions);
  const float* cs = (const float*)host_data(a->cos_table);
  const float* sn = (const float*)host_data(a->sin_table);
  void* x = host_data(a->x);
  uint64_t r, h, i;
  for (r = r0; r < r1; ++r) {
    const float* c = cs + (uint64_t)pos[r] * half;
    const float* s = sn + (uint64_t)pos[r] * half;
    for (h = 0; h < a->heads; ++h) {
      const uint64_t base = r * a->row_stride + a->x_offset + h * a->head_dim;
      for (i = 0; i < half; ++i) {
        const float u = gpulab_hal_load(dt, x, base + 2u * i), v = gpulab_hal_load(dt, x, base + 2u * i + 1u);
        gpulab_hal_store(dt, x, base + 2u * i, u * c[i] - v * s[i]);
        gpulab_hal_store(dt, x, base + 2u * i + 1u, u * s[i] + v * c[i]);
      }
    }
  }
}

static inline void host_silu_mul_rows(const gpulab_hal_silu_mul_args* a, uint64_t r0, uint64_t r1) {
  const uint32_t dt = a->dtype;
  const void* in = host_data(a->in);
  void* out = host_data(a->out);
  uint64_t r, i;
  for (r = r0; r < r1; ++r)
    for (i = 0; i < a->cols; ++i) {
      const float g = gpulab_hal_load(dt, in, r * 2u * a->cols + i);
      const float u = gpulab_hal_load(dt, in, r * 2u * a->cols + a->cols + i);
      gpulab_hal_store(dt, out, r * a->cols + i, g / (1.0f + expf(-g)) * u);
    }
}

/* One (row, head) of paged attention; `scores` holds positions[r] + 1 floats. */
static inline void host_attend_head(const gpulab_hal_paged_attention_args* a, uint64_t r, uint64_t h, float* scores) {
  const uint32_t dt = a->dtype;
  const int32_t* table = (const int32_t*)host_data(a->block_table);
  const uint64_t s = (uint64_t)((const int32_t*)host_data(a->seq_ids))[r];
  const uint64_t n = (uint64_t)((const int32_t*)host_data(a->positions))[r] + 1u;
  const uint64_t g = h / (a->q_heads / a->kv_heads), hd = a->head_dim;
  const uint64_t q0 = r * a->q_row_stride + a->q_offset + h * hd, o0 = (r * a->q_heads + h) * hd;
  const void *q = host_data(a->q), *kc = host_data(a->k_cache), *vc = host_data(a->v_cache);
  void* out = host_data(a->out);
  float mx = -INFINITY, sum = 0.0f;
  uint64_t t, i;
  for (t = 0; t < n; ++t) {
    const uint64_t b = (uint64_t)table[s * a->max_blocks_per_seq + t / a->block_size];
    const uint64_t k0 = ((b * a->block_size + t % a->block_size) * a->kv_heads + g) * hd;
    float dot = 0.0f;
    for (i = 0; i < hd; ++i) dot += gpulab_hal_load(dt, q, q0 + i) * gpulab_hal_load(dt, kc, k0 + i);
    scores[t] = dot * a->scale;
    if (scores[t] > mx) mx = scores[t];
  }
  for (t = 0; t < n; ++t) {
    scores[t] = expf(scores[t] - mx);
    sum += scores[t];
  }
  for (i = 0; i < hd; ++i) {
    float acc = 0.0f;
    for (t = 0; t < n; ++t) {
      const uint64_t b = (uint64_t)table[s * a->max_blocks_per_seq + t / a->block_size];
      acc += scores[t] * gpulab_hal_load(dt, vc, ((b * a->block_size + t % a->block_size) * a->kv_heads + g) * hd + i);
    }
    gpulab_hal_store(dt, out, o0 + i, acc / sum);
  }
}

/* Rows [r0, r1), every head. Returns 0 when the score scratch cannot be allocated. */
static inline int host_paged_attention_rows(const gpulab_hal_paged_attention_args* a, uint64_t r0, uint64_t r1) {
  const int32_t* pos = (const int32_t*)host_data(a->positions);
  uint64_t r, h, longest = 1;
  float* scores;
  for (r = r0; r < r1; ++r)
    if ((uint64_t)pos[r] + 1u > longest) longest = (uint64_t)pos[r] + 1u;
  scores = (float*)malloc((size_t)longest * sizeof(float));
  if (scores == NULL) return 0;
  for (r = r0; r < r1; ++r)
    for (h = 0; h < a->q_heads; ++h) host_attend_head(a, r, h, scores);
  free(scores);
  return 1;
}

#endif /* GPULAB_HAL_HOST_LAYER_OPS_H */
