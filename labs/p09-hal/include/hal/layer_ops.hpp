// The shapes of the ABI 2.2 decoder-layer ops as C++ values (the fields of
// the argument structs in gpulab_hal.h, which says what each op computes),
// plus host-memory conveniences that allocate, upload, run, download and free:
// what tests, the conformance harness and small clients use. A serving engine
// keeps its buffers on the backend and calls the DeviceBuffer overloads of
// Backend (backend.hpp) instead.
#pragma once

#include <cstdint>
#include <vector>

#include "hal/dtype.hpp"
#include "hal/status.hpp"

namespace gpulab::hal {

class Backend;

// x: rows rows of row_stride elements, heads x head_dim of them at x_offset.
struct RopeShape {
  std::uint64_t rows = 0, heads = 0, head_dim = 0;
  std::uint64_t row_stride = 0, x_offset = 0;
  std::uint64_t max_position = 0;  // rows of the cos/sin tables
};

// q: rows rows of q_row_stride elements, q_heads x head_dim of them at q_offset.
// K/V pool: num_blocks x block_size x kv_heads x head_dim; block table
// num_seqs x max_blocks_per_seq.
struct AttentionShape {
  std::uint64_t rows = 0, q_heads = 0, kv_heads = 0, head_dim = 0;
  std::uint64_t q_row_stride = 0, q_offset = 0;
  std::uint64_t num_blocks = 0, block_size = 0;
  std::uint64_t num_seqs = 0, max_blocks_per_seq = 0;
  float scale = 1.0f;
};

// Host tensors of one paged-attention call. q, k_cache, v_cache are encoded
// in the call's dtype (hal::encode); out receives rows*q_heads*head_dim of it.
struct AttentionHostData {
  const void* q = nullptr;
  const void* k_cache = nullptr;
  const void* v_cache = nullptr;
  const std::int32_t* block_table = nullptr;
  const std::int32_t* seq_ids = nullptr;
  const std::int32_t* positions = nullptr;
};

// Each returns what the backend (or the core's checks before it) said.
// in/out/x are encoded in `d`; weight too; cos/sin are binary32.
Status rmsnorm_host(const Backend& be, DType d, std::uint64_t rows, std::uint64_t cols, float eps,
                    const void* in, const void* weight, void* out);
Status rope_host(const Backend& be, DType d, const RopeShape& s, void* x,
                 const std::int32_t* positions, const float* cos_table, const float* sin_table);
Status silu_mul_host(const Backend& be, DType d, std::uint64_t rows, std::uint64_t cols,
                     const void* in, void* out);
Status paged_attention_host(const Backend& be, DType d, const AttentionShape& s,
                            const AttentionHostData& in, void* out);

}  // namespace gpulab::hal
