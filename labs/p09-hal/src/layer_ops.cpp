// Backend's ABI 2.2 wrappers and their host-memory conveniences. The shape
// checks are the ones every backend runs (gpulab_hal_layer_checks.h), done
// here first so a bad call fails the same way on every backend, and an old
// backend is never called through a function it does not have.
#include "hal/layer_ops.hpp"

#include <fmt/format.h>
#include <gpulab_hal/gpulab_hal_layer_checks.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>

#include "hal/backend.hpp"

namespace gpulab::hal {
namespace {

Status from(const gpulab_hal_error& e, gpulab_hal_status returned) {
  if (returned == GPULAB_HAL_OK) return {};
  return Status::failure(returned, std::string(e.message, strnlen(e.message, sizeof e.message)));
}

Status same_owner(const Backend* be, std::initializer_list<const DeviceBuffer*> bufs) {
  for (const DeviceBuffer* b : bufs)
    if (b->owner() != be)
      return Status::failure(GPULAB_HAL_ERR_INVALID_ARGUMENT, "buffer belongs to another backend");
  return {};
}

// Host conveniences: one device buffer per host tensor, at least one byte.
struct Staged {
  const Backend& be;
  std::vector<DeviceBuffer> bufs;
  Status status;

  const DeviceBuffer& add(const void* host, std::uint64_t bytes) {
    auto b = be.allocate(std::max<std::uint64_t>(bytes, 1));
    if (!b) {
      if (status.ok()) status = Status::failure(GPULAB_HAL_ERR_OUT_OF_MEMORY, b.error().message);
      bufs.emplace_back();
      return bufs.back();
    }
    bufs.push_back(std::move(b.value()));
    if (status.ok() && host != nullptr && bytes != 0) status = be.upload(bufs.back(), host, bytes);
    return bufs.back();
  }
};

std::uint64_t bytes_of(std::uint64_t a, std::uint64_t b, std::uint64_t c, std::uint64_t es) {
  std::uint64_t n = 0, r = 0;
  if (!hal_mul3(a, b, c, &n) || !hal_mul3(n, es, 1, &r)) return 0;  // the core check refuses it
  return r;
}

}  // namespace

bool Backend::has_function(Op o) const {
  switch (o) {
    case Op::kBuffer:
      return desc_.buffer_alloc && desc_.buffer_free && desc_.copy_to_device && desc_.copy_to_host;
    case Op::kMatmul:
      return desc_.matmul != nullptr;
    case Op::kSoftmax:
      return desc_.softmax != nullptr;
    case Op::kRmsNorm:
      return desc_.rmsnorm != nullptr;
    case Op::kRope:
      return desc_.rope != nullptr;
    case Op::kSiluMul:
      return desc_.silu_mul != nullptr;
    case Op::kPagedAttention:
      return desc_.paged_attention != nullptr;
  }
  return false;
}

Status Backend::usable(Op o, DType d) const {
  if (!declares(o) || !has_function(o))
    return Status::failure(GPULAB_HAL_ERR_UNSUPPORTED,
                           fmt::format("backend {} (ABI {}.{}) does not declare {}", name_,
                                       abi_major(), abi_minor(), op_name(o)));
  if (!declares(d))
    return Status::failure(GPULAB_HAL_ERR_UNSUPPORTED,
                           fmt::format("backend {} does not declare {}", name_, flag_name(d)));
  return {};
}

Status Backend::rmsnorm(DType d, std::uint64_t rows, std::uint64_t cols, float eps,
                        const DeviceBuffer& in, const DeviceBuffer& weight,
                        const DeviceBuffer& out) const {
  if (Status s = usable(Op::kRmsNorm, d); !s.ok()) return s;
  if (Status s = same_owner(this, {&in, &weight, &out}); !s.ok()) return s;
  gpulab_hal_rmsnorm_args args{sizeof args, bit(d),          rows,        cols, eps, 0,
                               in.handle(), weight.handle(), out.handle()};
  gpulab_hal_error err;
  gpulab_hal_clear_error(&err);
  if (auto st =
          hal_check_rmsnorm(&args, desc_.dtypes, in.bytes(), weight.bytes(), out.bytes(), &err))
    return from(err, st);
  return from(err, desc_.rmsnorm(ctx_, &args, &err));
}

Status Backend::rope(DType d, const RopeShape& s, const DeviceBuffer& x,
                     const DeviceBuffer& positions, const DeviceBuffer& cos_table,
                     const DeviceBuffer& sin_table) const {
  if (Status st = usable(Op::kRope, d); !st.ok()) return st;
  if (Status st = same_owner(this, {&x, &positions, &cos_table, &sin_table}); !st.ok()) return st;
  gpulab_hal_rope_args args{sizeof args,
                            bit(d),
                            s.rows,
                            s.heads,
                            s.head_dim,
                            s.row_stride,
                            s.x_offset,
                            s.max_position,
                            x.handle(),
                            positions.handle(),
                            cos_table.handle(),
                            sin_table.handle()};
  gpulab_hal_error err;
  gpulab_hal_clear_error(&err);
  if (auto st = hal_check_rope(&args, desc_.dtypes, x.bytes(), positions.bytes(), cos_table.bytes(),
                               sin_table.bytes(), &err))
    return from(err, st);
  return from(err, desc_.rope(ctx_, &args, &err));
}

Status Backend::silu_mul(DType d, std::uint64_t rows, std::uint64_t cols, const DeviceBuffer& in,
                         const DeviceBuffer& out) const {
  if (Status s = usable(Op::kSiluMul, d); !s.ok()) return s;
  if (Status s = same_owner(this, {&in, &out}); !s.ok()) return s;
  gpulab_hal_silu_mul_args args{sizeof args, bit(d), rows, cols, in.handle(), out.handle()};
  gpulab_hal_error err;
  gpulab_hal_clear_error(&err);
  if (auto st = hal_check_silu_mul(&args, desc_.dtypes, in.bytes(), out.bytes(), &err))
    return from(err, st);
  return from(err, desc_.silu_mul(ctx_, &args, &err));
}

Status Backend::paged_attention(DType d, const AttentionShape& s, const DeviceBuffer& q,
                                const DeviceBuffer& k_cache, const DeviceBuffer& v_cache,
                                const DeviceBuffer& block_table, const DeviceBuffer& seq_ids,
                                const DeviceBuffer& positions, const DeviceBuffer& out) const {
  if (Status st = usable(Op::kPagedAttention, d); !st.ok()) return st;
  if (Status st =
          same_owner(this, {&q, &k_cache, &v_cache, &block_table, &seq_ids, &positions, &out});
      !st.ok())
    return st;
  gpulab_hal_paged_attention_args args{};
  args.struct_size = sizeof args;
  args.dtype = bit(d);
  args.rows = s.rows;
  args.q_heads = s.q_heads;
  args.kv_heads = s.kv_heads;
  args.head_dim = s.head_dim;
  args.q_row_stride = s.q_row_stride;
  args.q_offset = s.q_offset;
  args.num_blocks = s.num_blocks;
  args.block_size = s.block_size;
  args.num_seqs = s.num_seqs;
  args.max_blocks_per_seq = s.max_blocks_per_seq;
  args.scale = s.scale;
  args.q = q.handle();
  args.k_cache = k_cache.handle();
  args.v_cache = v_cache.handle();
  args.block_table = block_table.handle();
  args.seq_ids = seq_ids.handle();
  args.positions = positions.handle();
  args.out = out.handle();
  const std::uint64_t bytes[7] = {q.bytes(),           k_cache.bytes(), v_cache.bytes(),
                                  block_table.bytes(), seq_ids.bytes(), positions.bytes(),
                                  out.bytes()};
  gpulab_hal_error err;
  gpulab_hal_clear_error(&err);
  if (auto st = hal_check_paged_attention(&args, desc_.dtypes, bytes, &err)) return from(err, st);
  return from(err, desc_.paged_attention(ctx_, &args, &err));
}

// ---- host conveniences ------------------------------------------------------
Status rmsnorm_host(const Backend& be, DType d, std::uint64_t rows, std::uint64_t cols, float eps,
                    const void* in, const void* weight, void* out) {
  if (Status s = be.usable(Op::kRmsNorm, d); !s.ok()) return s;
  const std::uint64_t es = element_size(d), n = bytes_of(rows, cols, 1, es);
  Staged st{be, {}, {}};
  st.bufs.reserve(3);
  const DeviceBuffer& I = st.add(in, n);
  const DeviceBuffer& W = st.add(weight, bytes_of(cols, 1, 1, es));
  const DeviceBuffer& O = st.add(nullptr, n);
  if (!st.status.ok()) return st.status;
  if (Status s = be.rmsnorm(d, rows, cols, eps, I, W, O); !s.ok()) return s;
  return n == 0 ? Status{} : be.download(out, O, n);
}

Status rope_host(const Backend& be, DType d, const RopeShape& s, void* x,
                 const std::int32_t* positions, const float* cos_table, const float* sin_table) {
  if (Status st = be.usable(Op::kRope, d); !st.ok()) return st;
  const std::uint64_t xb = bytes_of(s.rows, s.row_stride, 1, element_size(d));
  const std::uint64_t tb = bytes_of(s.max_position, s.head_dim / 2, 1, 4);
  Staged st{be, {}, {}};
  st.bufs.reserve(4);
  const DeviceBuffer& X = st.add(x, xb);
  const DeviceBuffer& P = st.add(positions, bytes_of(s.rows, 1, 1, 4));
  const DeviceBuffer& C = st.add(cos_table, tb);
  const DeviceBuffer& S = st.add(sin_table, tb);
  if (!st.status.ok()) return st.status;
  if (Status r = be.rope(d, s, X, P, C, S); !r.ok()) return r;
  return xb == 0 ? Status{} : be.download(x, X, xb);
}

Status silu_mul_host(const Backend& be, DType d, std::uint64_t rows, std::uint64_t cols,
                     const void* in, void* out) {
  if (Status s = be.usable(Op::kSiluMul, d); !s.ok()) return s;
  const std::uint64_t es = element_size(d), n = bytes_of(rows, cols, 1, es);
  Staged st{be, {}, {}};
  st.bufs.reserve(2);
  const DeviceBuffer& I = st.add(in, bytes_of(rows, cols, 2, es));
  const DeviceBuffer& O = st.add(nullptr, n);
  if (!st.status.ok()) return st.status;
  if (Status s = be.silu_mul(d, rows, cols, I, O); !s.ok()) return s;
  return n == 0 ? Status{} : be.download(out, O, n);
}

Status paged_attention_host(const Backend& be, DType d, const AttentionShape& s,
                            const AttentionHostData& in, void* out) {
  if (Status st = be.usable(Op::kPagedAttention, d); !st.ok()) return st;
  const std::uint64_t es = element_size(d);
  const std::uint64_t cache = bytes_of(s.num_blocks * s.block_size, s.kv_heads, s.head_dim, es);
  const std::uint64_t ob = bytes_of(s.rows, s.q_heads, s.head_dim, es);
  Staged st{be, {}, {}};
  st.bufs.reserve(7);
  const DeviceBuffer& Q = st.add(in.q, bytes_of(s.rows, s.q_row_stride, 1, es));
  const DeviceBuffer& K = st.add(in.k_cache, cache);
  const DeviceBuffer& V = st.add(in.v_cache, cache);
  const DeviceBuffer& T = st.add(in.block_table, bytes_of(s.num_seqs, s.max_blocks_per_seq, 1, 4));
  const DeviceBuffer& S = st.add(in.seq_ids, bytes_of(s.rows, 1, 1, 4));
  const DeviceBuffer& P = st.add(in.positions, bytes_of(s.rows, 1, 1, 4));
  const DeviceBuffer& O = st.add(nullptr, ob);
  if (!st.status.ok()) return st.status;
  if (Status r = be.paged_attention(d, s, Q, K, V, T, S, P, O); !r.ok()) return r;
  return ob == 0 ? Status{} : be.download(out, O, ob);
}

}  // namespace gpulab::hal
