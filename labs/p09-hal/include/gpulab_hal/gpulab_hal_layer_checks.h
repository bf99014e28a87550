/* gpulab_hal_layer_checks.h — the argument checks of the ABI v2.2 decoder-layer
 * ops (rmsnorm, rope, silu_mul, paged_attention), written once for the core
 * and every backend. Plain C11, static inline: nothing is exported.
 *
 * Each checker takes the byte size of every buffer the op names (however the
 * backend keeps its buffers: host memory, cl_mem, a CUDA pointer) and
 * returns GPULAB_HAL_OK or fills `err`: ERR_UNSUPPORTED for a dtype outside
 * `declared`, ERR_INVALID_ARGUMENT for a short args struct, a NULL buffer, an
 * inconsistent shape or a buffer too small for it. Checks of index *contents*
 * (positions, seq_ids, block tables) are separate: they need the host to see
 * the indices (hal_check_*_indices below). */
#ifndef GPULAB_HAL_LAYER_CHECKS_H
#define GPULAB_HAL_LAYER_CHECKS_H

#include <math.h>

#include "gpulab_hal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* a * b * c into *out; 0 on overflow. */
static inline int hal_mul3(uint64_t a, uint64_t b, uint64_t c, uint64_t* out) {
  uint64_t ab;
  if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, out)) return 0;
  return 1;
}

static inline gpulab_hal_status hal_check_dtype(uint32_t dtype, uint32_t declared, gpulab_hal_error* err) {
  if ((dtype & declared) == 0 || (dtype & (dtype - 1u)) != 0)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_UNSUPPORTED, "dtype mask 0x%x is not one declared dtype",
                           (unsigned)dtype);
  return GPULAB_HAL_OK;
}

/* `have` bytes hold a*b*c elements of `es` bytes. */
static inline gpulab_hal_status hal_check_holds(const char* what, uint64_t have, uint64_t a, uint64_t b, uint64_t c,
                                                uint64_t es, gpulab_hal_error* err) {
  uint64_t n, bytes;
  if (!hal_mul3(a, b, c, &n) || !hal_mul3(n, es, 1, &bytes))
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "%s: shape overflows 64 bits", what);
  if (have < bytes)
    return gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, "%s needs %llu bytes, the buffer has %llu", what,
                           (unsigned long long)bytes, (unsigned long long)have);
  return GPULAB_HAL_OK;
}

#define HAL_CHECK_(expr)                        \
  do {                                          \
    const gpulab_hal_status st_ = (expr);       \
    if (st_ != GPULAB_HAL_OK) return st_;       \
  } while (0)
#define HAL_INVALID_(...) gpulab_hal_fail(err, GPULAB_HAL_ERR_INVALID_ARGUMENT, __VA_ARGS__)
/* Dimensions fit 32 bits: kernels index with them. */
#define HAL_DIM_MAX_ 0xFFFFFFFFull

/* bytes: in, weight, out. */
static inline gpulab_hal_status hal_check_rmsnorm(const gpulab_hal_rmsnorm_args* a, uint32_t declared,
                                                  uint64_t in_bytes, uint64_t weight_bytes, uint64_t out_bytes,
                                                  gpulab_hal_error* err) {
  uint64_t es;
  if (a == NULL || a->struct_size < sizeof(gpulab_hal_rmsnorm_args))
    return HAL_INVALID_("rmsnorm args missing or too small");
  HAL_CHECK_(hal_check_dtype(a->dtype, declared, err));
  if (a->rows > HAL_DIM_MAX_ || a->cols > HAL_DIM_MAX_) return HAL_INVALID_("rmsnorm: dimension above 2^32");
  if (!(a->eps >= 0.0f) || isinf(a->eps)) return HAL_INVALID_("rmsnorm: eps must be finite and >= 0");
  es = gpulab_hal_dtype_size(a->dtype);
  HAL_CHECK_(hal_check_holds("rmsnorm in", in_bytes, a->rows, a->cols, 1, es, err));
  HAL_CHECK_(hal_check_holds("rmsnorm weight", weight_bytes, a->cols, 1, 1, es, err));
  HAL_CHECK_(hal_check_holds("rmsnorm out", out_bytes, a->rows, a->cols, 1, es, err));
  return GPULAB_HAL_OK;
}

/* bytes: x, positions, cos_table, sin_table. */
static inline gpulab_hal_status hal_check_rope(const gpulab_hal_rope_args* a, uint32_t declared, uint64_t x_bytes,
                                               uint64_t pos_bytes, uint64_t cos_bytes, uint64_t sin_bytes,
                                               gpulab_hal_error* err) {
  uint64_t es, span;
  if (a == NULL || a->struct_size < sizeof(gpulab_hal_rope_args)) return HAL_INVALID_("rope args missing or too small");
  HAL_CHECK_(hal_check_dtype(a->dtype, declared, err));
  if (a->rows > HAL_DIM_MAX_ || a->heads > HAL_DIM_MAX_ || a->head_dim > HAL_DIM_MAX_ || a->row_stride > HAL_DIM_MAX_ ||
      a->max_position > HAL_DIM_MAX_)
    return HAL_INVALID_("rope: dimension above 2^32");
  if (a->head_dim % 2u != 0) return HAL_INVALID_("rope: head_dim %llu is odd", (unsigned long long)a->head_dim);
  if (!hal_mul3(a->heads, a->head_dim, 1, &span) || a->x_offset > a->row_stride || span > a->row_stride - a->x_offset)
    return HAL_INVALID_("rope: x_offset %llu + %llu heads x %llu exceeds row_stride %llu",
                        (unsigned long long)a->x_offset, (unsigned long long)a->heads,
                        (unsigned long long)a->head_dim, (unsigned long long)a->row_stride);
  es = gpulab_hal_dtype_size(a->dtype);
  HAL_CHECK_(hal_check_holds("rope x", x_bytes, a->rows, a->row_stride, 1, es, err));
  HAL_CHECK_(hal_check_holds("rope positions", pos_bytes, a->rows, 1, 1, 4, err));
  HAL_CHECK_(hal_check_holds("rope cos_table", cos_bytes, a->max_position, a->head_dim / 2u, 1, 4, err));
  HAL_CHECK_(hal_check_holds("rope sin_table", sin_bytes, a->max_position, a->head_dim / 2u, 1, 4, err));
  return GPULAB_HAL_OK;
}

/* bytes: in, out. */
static inline gpulab_hal_status hal_check_silu_mul(const gpulab_hal_silu_mul_args* a, uint32_t declared,
                                                   uint64_t in_bytes, uint64_t out_bytes, gpulab_hal_error* err) {
  uint64_t es;
  if (a == NULL || a->struct_size < sizeof(gpulab_hal_silu_mul_args))
    return HAL_INVALID_("silu_mul args missing or too small");
  HAL_CHECK_(hal_check_dtype(a->dtype, declared, err));
  if (a->rows > HAL_DIM_MAX_ || a->cols > HAL_DIM_MAX_ / 2u) return HAL_INVALID_("silu_mul: dimension above 2^31");
  es = gpulab_hal_dtype_size(a->dtype);
  HAL_CHECK_(hal_check_holds("silu_mul in", in_bytes, a->rows, a->cols, 2, es, err));
  HAL_CHECK_(hal_check_holds("silu_mul out", out_bytes, a->rows, a->cols, 1, es, err));
  return GPULAB_HAL_OK;
}

/* bytes: q, k_cache, v_cache, block_table, seq_ids, positions, out. */
static inline gpulab_hal_status hal_check_paged_attention(const gpulab_hal_paged_attention_args* a, uint32_t declared,
                                                          const uint64_t bytes[7], gpulab_hal_error* err) {
  uint64_t es, span, slots;
  if (a == NULL || a->struct_size < sizeof(gpulab_hal_paged_attention_args))
    return HAL_INVALID_("paged_attention args missing or too small");
  HAL_CHECK_(hal_check_dtype(a->dtype, declared, err));
  if (a->rows > HAL_DIM_MAX_ || a->q_heads > HAL_DIM_MAX_ || a->kv_heads > HAL_DIM_MAX_ ||
      a->head_dim > HAL_DIM_MAX_ || a->q_row_stride > HAL_DIM_MAX_ || a->num_blocks > HAL_DIM_MAX_ ||
      a->block_size > HAL_DIM_MAX_ || a->num_seqs > HAL_DIM_MAX_ || a->max_blocks_per_seq > HAL_DIM_MAX_)
    return HAL_INVALID_("paged_attention: dimension above 2^32");
  if (a->kv_heads == 0 || a->q_heads % a->kv_heads != 0)
    return HAL_INVALID_("paged_attention: q_heads %llu is not a multiple of kv_heads %llu",
                        (unsigned long long)a->q_heads, (unsigned long long)a->kv_heads);
  if (a->block_size == 0) return HAL_INVALID_("paged_attention: block_size is 0");
  if (!hal_mul3(a->max_blocks_per_seq, a->block_size, 1, &slots) || slots > 0x7FFFFFFFull)
    return HAL_INVALID_("paged_attention: max_blocks_per_seq x block_size exceeds 2^31 positions");
  if (isnan(a->scale) || isinf(a->scale)) return HAL_INVALID_("paged_attention: scale must be finite");
  if (!hal_mul3(a->q_heads, a->head_dim, 1, &span) || a->q_offset > a->q_row_stride ||
      span > a->q_row_stride - a->q_offset)
    return HAL_INVALID_("paged_attention: q_offset %llu + %llu heads x %llu exceeds q_row_stride %llu",
                        (unsigned long long)a->q_offset, (unsigned long long)a->q_heads,
                        (unsigned long long)a->head_dim, (unsigned long long)a->q_row_stride);
  es = gpulab_hal_dtype_size(a->dtype);
  HAL_CHECK_(hal_check_holds("paged_attention q", bytes[0], a->rows, a->q_row_stride, 1, es, err));
  if (!hal_mul3(a->kv_heads, a->head_dim, es, &span))
    return HAL_INVALID_("paged_attention: shape overflows 64 bits");
  HAL_CHECK_(hal_check_holds("paged_attention k_cache", bytes[1], a->num_blocks, a->block_size, span, 1, err));
  HAL_CHECK_(hal_check_holds("paged_attention v_cache", bytes[2], a->num_blocks, a->block_size, span, 1, err));
  HAL_CHECK_(hal_check_holds("paged_attention block_table", bytes[3], a->num_seqs, a->max_blocks_per_seq, 1, 4, err));
  HAL_CHECK_(hal_check_holds("paged_attention seq_ids", bytes[4], a->rows, 1, 1, 4, err));
  HAL_CHECK_(hal_check_holds("paged_attention positions", bytes[5], a->rows, 1, 1, 4, err));
  HAL_CHECK_(hal_check_holds("paged_attention out", bytes[6], a->rows, a->q_heads, a->head_dim, es, err));
  return GPULAB_HAL_OK;
}

/* Index contents, for backends that see them in host memory. */
static inline gpulab_hal_status hal_check_rope_indices(const gpulab_hal_rope_args* a, const int32_t* positions,
                                                       gpulab_hal_error* err) {
  uint64_t r;
  for (r = 0; r < a->rows; ++r)
    if (positions[r] < 0 || (uint64_t)positions[r] >= a->max_position)
      return HAL_INVALID_("rope: positions[%llu] = %d is outside [0, %llu)", (unsigned long long)r, (int)positions[r],
                          (unsigned long long)a->max_position);
  return GPULAB_HAL_OK;
}

static inline gpulab_hal_status hal_check_attention_indices(const gpulab_hal_paged_attention_args* a,
                                                            const int32_t* block_table, const int32_t* seq_ids,
                                                            const int32_t* positions, gpulab_hal_error* err) {
  uint64_t r, j;
  if (a->q_heads == 0) return GPULAB_HAL_OK; /* nothing is read */
  for (r = 0; r < a->rows; ++r) {
    const int32_t s = seq_ids[r], p = positions[r];
    if (s < 0 || (uint64_t)s >= a->num_seqs)
      return HAL_INVALID_("paged_attention: seq_ids[%llu] = %d is outside [0, %llu)", (unsigned long long)r, (int)s,
                          (unsigned long long)a->num_seqs);
    if (p < 0 || (uint64_t)p >= a->max_blocks_per_seq * a->block_size)
      return HAL_INVALID_("paged_attention: positions[%llu] = %d is outside [0, %llu)", (unsigned long long)r, (int)p,
                          (unsigned long long)(a->max_blocks_per_seq * a->block_size));
    for (j = 0; j <= (uint64_t)p / a->block_size; ++j) {
      const int32_t b = block_table[(uint64_t)s * a->max_blocks_per_seq + j];
      if (b < 0 || (uint64_t)b >= a->num_blocks)
        return HAL_INVALID_("paged_attention: block_table[%d][%llu] = %d is outside [0, %llu)", (int)s,
                            (unsigned long long)j, (int)b, (unsigned long long)a->num_blocks);
    }
  }
  return GPULAB_HAL_OK;
}

#undef HAL_CHECK_
#undef HAL_INVALID_
#undef HAL_DIM_MAX_

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* GPULAB_HAL_LAYER_CHECKS_H */
