#include "serving/layer_ops.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "gpulab/errors.hpp"
#include "serving/model.hpp"

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
  reserve_buffer(*backend_, buf, bytes);
  return buf;
}

void LayerKernels::check(const hal::Status& s, const char* what) const {
  if (!s.ok())
    throw gpulab::RunError(fmt::format("{} {}: {}", backend_->name(), what, hal::describe(s)));
}

void LayerKernels::rms_norm(const hal::DeviceBuffer& x, std::size_t rows, std::size_t width,
                            const hal::DeviceBuffer& gain, double eps,
                            const hal::DeviceBuffer& out) {
  if (rows == 0) return;
  check(backend_->rmsnorm(hal::DType::kF32, rows, width, static_cast<float>(eps), x, gain, out),
        "rmsnorm");
}

void LayerKernels::rms_norm(const float* x, std::size_t rows, std::size_t width,
                            const hal::DeviceBuffer& gain, double eps, float* out) {
  if (rows == 0) return;
  const std::size_t bytes = rows * width * sizeof(float);
  hal::DeviceBuffer& in = scratch(kIn, bytes);
  hal::DeviceBuffer& o = scratch(kOut, bytes);
  check(backend_->upload(in, x, bytes), "upload");
  rms_norm(in, rows, width, gain, eps, o);
  check(backend_->download(out, o, bytes), "download");
}

void LayerKernels::silu_mul(const hal::DeviceBuffer& gate_up, std::size_t rows, std::size_t ffn,
                            const hal::DeviceBuffer& out) {
  if (rows == 0) return;
  check(backend_->silu_mul(hal::DType::kF32, rows, ffn, gate_up, out), "silu_mul");
}

void LayerKernels::silu_mul(const float* gate_up, std::size_t rows, std::size_t ffn, float* out) {
  if (rows == 0) return;
  hal::DeviceBuffer& in = scratch(kIn, rows * 2 * ffn * sizeof(float));
  hal::DeviceBuffer& o = scratch(kOut, rows * ffn * sizeof(float));
  check(backend_->upload(in, gate_up, rows * 2 * ffn * sizeof(float)), "upload");
  silu_mul(in, rows, ffn, o);
  check(backend_->download(out, o, rows * ffn * sizeof(float)), "download");
}

void LayerKernels::stage_rows(const std::vector<std::int32_t>& positions,
                              const std::vector<std::int32_t>& tables, std::size_t table_width) {
  const std::size_t rows = positions.size();
  if (rows == 0) return;
  positions_ = positions;
  tables_ = tables;
  table_width_ = table_width;
  // Each row is its own "sequence" of the attention call: seq_ids = 0..rows-1, one table each.
  std::vector<std::int32_t> seq(rows);
  for (std::size_t r = 0; r < rows; ++r) seq[r] = static_cast<std::int32_t>(r);
  check(backend_->upload(scratch(kPos, rows * sizeof(std::int32_t)), positions.data(),
                         rows * sizeof(std::int32_t)),
        "upload");
  check(backend_->upload(scratch(kTable, rows * table_width * sizeof(std::int32_t)), tables.data(),
                         rows * table_width * sizeof(std::int32_t)),
        "upload");
  check(backend_->upload(scratch(kSeq, rows * sizeof(std::int32_t)), seq.data(),
                         rows * sizeof(std::int32_t)),
        "upload");
}

void LayerKernels::attention(const hal::DeviceBuffer& qkv, std::size_t rows, const ModelConfig& c,
                             std::size_t layer, KvStore& kv, const hal::DeviceBuffer& cos,
                             const hal::DeviceBuffer& sin, const hal::DeviceBuffer& out) {
  if (rows == 0) return;
  if (rows != positions_.size())
    throw std::logic_error("LayerKernels::attention: rows differ from the staged rows");
  const std::size_t d = c.d_model, hd = c.head_dim(), kvd = c.kv_dim(), qkvd = c.qkv_dim();
  const hal::DeviceBuffer& pos = buffers_[kPos];
  // q heads at 0, k heads at d_model of each fused row, rotated where they lie.
  hal::RopeShape rs{rows, c.heads, hd, qkvd, 0, c.max_context};
  check(backend_->rope(hal::DType::kF32, rs, qkv, pos, cos, sin), "rope(q)");
  rs.heads = c.kv_heads;
  rs.x_offset = d;
  check(backend_->rope(hal::DType::kF32, rs, qkv, pos, cos, sin), "rope(k)");
  // The K/V pool is written slot by slot from the host (the HAL has no scatter op):
  // every row's K/V first, since a prefill chunk's later rows attend to its earlier ones.
  rotated_.resize(rows * qkvd);
  check(backend_->download(rotated_.data(), qkv, rows * qkvd * sizeof(float)), "download");
  const std::size_t bs = kv.block_size();
  for (std::size_t r = 0; r < rows; ++r) {
    const auto p = static_cast<std::size_t>(positions_[r]);
    const float* k = rotated_.data() + r * qkvd + d;
    kv.write(layer, tables_[r * table_width_ + p / bs], p % bs, k, k + kvd);
  }
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
  as.max_blocks_per_seq = table_width_;
  as.scale = 1.0f / std::sqrt(static_cast<float>(hd));
  check(backend_->paged_attention(hal::DType::kF32, as, qkv, kv.keys(layer), kv.values(layer),
                                  buffers_[kTable], buffers_[kSeq], pos, out),
        "paged_attention");
}

void LayerKernels::attention(float* qkv, std::size_t rows, const ModelConfig& c,
                             const std::vector<std::int32_t>& positions,
                             const std::vector<std::int32_t>& tables, std::size_t table_width,
                             std::size_t layer, KvStore& kv, const hal::DeviceBuffer& cos,
                             const hal::DeviceBuffer& sin, float* out) {
  if (rows == 0) return;
  const std::size_t qkv_bytes = rows * c.qkv_dim() * sizeof(float);
  stage_rows(positions, tables, table_width);
  hal::DeviceBuffer& q = scratch(kQkv, qkv_bytes);
  hal::DeviceBuffer& o = scratch(kAttn, rows * c.d_model * sizeof(float));
  check(backend_->upload(q, qkv, qkv_bytes), "upload");
  attention(q, rows, c, layer, kv, cos, sin, o);
  std::memcpy(qkv, rotated_.data(), qkv_bytes);  // qkv comes back rotated
  check(backend_->download(out, o, rows * c.d_model * sizeof(float)), "download");
}

}  // namespace serving
