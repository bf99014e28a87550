#include "serving/layer_ops.hpp"

#include <fmt/format.h>

#include <cmath>

#include "gpulab/errors.hpp"

namespace serving {

namespace hal = gpulab::hal;

void add_into(float* x, const float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] += y[i];
}

namespace {
// Scratch slots, one per tensor an op stages.
enum Slot : std::size_t { kIn, kOut, kQkv, kPos, kTable, kSeq, kAttn, kSlots };
}  // namespace

hal::DeviceBuffer& LayerKernels::scratch(std::size_t slot, std::size_t bytes) {
  if (buffers_.empty()) buffers_.resize(kSlots);
  hal::DeviceBuffer& buf = buffers_[slot];
  if (buf.bytes() < bytes || buf.handle() == nullptr) {
    auto fresh = backend_->allocate(std::max<std::size_t>(bytes, 64));
    if (!fresh)
      throw gpulab::RunError(fmt::format("{}: {}", backend_->name(), fresh.error().message));
    buf = std::move(fresh.value());
  }
  return buf;
}

void LayerKernels::check(const hal::Status& s, const char* what) const {
  if (!s.ok())
    throw gpulab::RunError(fmt::format("{} {}: {}", backend_->name(), what, hal::describe(s)));
}

void LayerKernels::rms_norm(const float* x, std::size_t rows, std::size_t width,
                            const hal::DeviceBuffer& gain, double eps, float* out) {
  if (rows == 0) return;
  const std::size_t bytes = rows * width * sizeof(float);
  hal::DeviceBuffer& in = scratch(kIn, bytes);
  hal::DeviceBuffer& o = scratch(kOut, bytes);
  check(backend_->upload(in, x, bytes), "upload");
  check(backend_->rmsnorm(hal::DType::kF32, rows, width, static_cast<float>(eps), in, gain, o),
        "rmsnorm");
  check(backend_->download(out, o, bytes), "download");
}

void LayerKernels::silu_mul(const float* gate_up, std::size_t rows, std::size_t ffn, float* out) {
  if (rows == 0) return;
  hal::DeviceBuffer& in = scratch(kIn, rows * 2 * ffn * sizeof(float));
  hal::DeviceBuffer& o = scratch(kOut, rows * ffn * sizeof(float));
  check(backend_->upload(in, gate_up, rows * 2 * ffn * sizeof(float)), "upload");
  check(backend_->silu_mul(hal::DType::kF32, rows, ffn, in, o), "silu_mul");
  check(backend_->download(out, o, rows * ffn * sizeof(float)), "download");
}

void LayerKernels::attention(float* qkv, std::size_t rows, const ModelConfig& c,
                             const std::vector<std::int32_t>& positions,
                             const std::vector<std::int32_t>& tables, std::size_t table_width,
                             std::size_t layer, KvStore& kv, const hal::DeviceBuffer& cos,
                             const hal::DeviceBuffer& sin, float* out) {
  if (rows == 0) return;
  const std::size_t d = c.d_model, hd = c.head_dim(), kvd = c.kv_dim(), qkvd = c.qkv_dim();
  const std::size_t qkv_bytes = rows * qkvd * sizeof(float);
  hal::DeviceBuffer& q = scratch(kQkv, qkv_bytes);
  hal::DeviceBuffer& pos = scratch(kPos, rows * sizeof(std::int32_t));
  check(backend_->upload(q, qkv, qkv_bytes), "upload");
  check(backend_->upload(pos, positions.data(), rows * sizeof(std::int32_t)), "upload");
  // q heads at 0, k heads at d_model of each fused row, rotated where they lie.
  hal::RopeShape rs{rows, c.heads, hd, qkvd, 0, c.max_context};
  check(backend_->rope(hal::DType::kF32, rs, q, pos, cos, sin), "rope(q)");
  rs.heads = c.kv_heads;
  rs.x_offset = d;
  check(backend_->rope(hal::DType::kF32, rs, q, pos, cos, sin), "rope(k)");
  check(backend_->download(qkv, q, qkv_bytes), "download");
  // Every row's K/V first: a prefill chunk's later rows attend to its earlier ones.
  const std::size_t bs = kv.block_size();
  for (std::size_t r = 0; r < rows; ++r) {
    const auto p = static_cast<std::size_t>(positions[r]);
    const float* k = qkv + r * qkvd + d;
    kv.write(layer, tables[r * table_width + p / bs], p % bs, k, k + kvd);
  }
  // Each row is its own "sequence" of the call: seq_ids = 0..rows-1, one table each.
  std::vector<std::int32_t> seq(rows);
  for (std::size_t r = 0; r < rows; ++r) seq[r] = static_cast<std::int32_t>(r);
  hal::DeviceBuffer& table = scratch(kTable, tables.size() * sizeof(std::int32_t));
  hal::DeviceBuffer& seqs = scratch(kSeq, rows * sizeof(std::int32_t));
  hal::DeviceBuffer& o = scratch(kAttn, rows * d * sizeof(float));
  check(backend_->upload(table, tables.data(), rows * table_width * sizeof(std::int32_t)),
        "upload");
  check(backend_->upload(seqs, seq.data(), rows * sizeof(std::int32_t)), "upload");
  hal::AttentionShape as;
  as.rows = rows;
  as.q_heads = c.heads;
  as.kv_heads = c.kv_heads;
  as.head_dim = hd;
  as.q_row_stride = qkvd;
  as.q_offset = 0;
  as.num_blocks = kv.num_blocks();
  as.block_size = bs;
  as.num_seqs = rows;
  as.max_blocks_per_seq = table_width;
  as.scale = 1.0f / std::sqrt(static_cast<float>(hd));
  check(backend_->paged_attention(hal::DType::kF32, as, q, kv.keys(layer), kv.values(layer), table,
                                  seqs, pos, o),
        "paged_attention");
  check(backend_->download(out, o, rows * d * sizeof(float)), "download");
}

}  // namespace serving
