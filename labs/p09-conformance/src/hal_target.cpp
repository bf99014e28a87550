#include "conformance/hal_target.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "conformance/reference.hpp"
#include "gpulab/timing.hpp"

namespace hal = gpulab::hal;

namespace conformance {
namespace {

RunOutcome failed(const hal::Status& s) {
  return RunOutcome{false, hal::describe(s), {}};
}

// A pointer the ABI may read even for zero bytes (never dereferenced then).
const void* data_or_dummy(const std::vector<std::uint8_t>& v) {
  static const std::uint8_t dummy = 0;
  return v.empty() ? &dummy : v.data();
}

}  // namespace

hal::DType to_hal(DType t) {
  switch (t) {
    case DType::kF32:
      return hal::DType::kF32;
    case DType::kF16:
      return hal::DType::kF16;
    case DType::kBF16:
      return hal::DType::kBF16;
    case DType::kFP8:
      return hal::DType::kFP8;
  }
  return hal::DType::kF32;
}

std::optional<DType> from_hal(hal::DType t) {
  switch (t) {
    case hal::DType::kF32:
      return DType::kF32;
    case hal::DType::kF16:
      return DType::kF16;
    case hal::DType::kBF16:
      return DType::kBF16;
    case hal::DType::kFP8:
      return DType::kFP8;
    case hal::DType::kINT8:
      return std::nullopt;  // no op uses it yet
  }
  return std::nullopt;
}

BackendInfo info_of(const hal::Backend& be) {
  BackendInfo info;
  info.name = std::string(be.name());
  info.abi = fmt::format("{}.{}", be.abi_major(), be.abi_minor());
  info.device = be.device();
  info.perf_hint = be.perf_hint();
  info.max_dim = be.max_dim();
  if (be.declares(hal::Op::kBuffer)) info.ops.push_back(Op::kBuffer);
  if (be.declares(hal::Op::kMatmul)) info.ops.push_back(Op::kMatmul);
  if (be.declares(hal::Op::kSoftmax)) info.ops.push_back(Op::kSoftmax);
  if (be.declares(hal::Op::kRmsNorm)) info.ops.push_back(Op::kRmsNorm);
  if (be.declares(hal::Op::kRope)) info.ops.push_back(Op::kRope);
  if (be.declares(hal::Op::kSiluMul)) info.ops.push_back(Op::kSiluMul);
  if (be.declares(hal::Op::kPagedAttention)) info.ops.push_back(Op::kPagedAttention);
  for (DType t : kAllDTypes)
    if (be.declares(to_hal(t))) info.dtypes.push_back(t);
  return info;
}

RunOutcome HalTarget::run_buffer(const Case& c, const std::vector<std::uint8_t>& bytes) {
  // m bytes at offset n of a buffer with 3 bytes of slack at the end: the copy
  // must land exactly there and come back unchanged.
  const std::uint64_t size = c.shape.m, offset = c.shape.n;
  auto buf = be_.allocate(offset + size + 3);
  if (!buf) return RunOutcome{false, "allocate: " + buf.error().message, {}};
  if (hal::Status s = be_.upload(buf.value(), data_or_dummy(bytes), size, offset); !s.ok())
    return failed(s);
  RunOutcome out;
  out.output.assign(size, 0);
  std::vector<std::uint8_t> sink(1);
  if (hal::Status s =
          be_.download(size ? out.output.data() : sink.data(), buf.value(), size, offset);
      !s.ok())
    return failed(s);
  if (hal::Status s = buf.value().release(); !s.ok()) return failed(s);
  return out;
}

RunOutcome HalTarget::run_layer_op(const Case& c, const std::vector<std::vector<std::uint8_t>>& in) {
  const auto elem = static_cast<std::uint64_t>(format_of(c.dtype).bytes);
  const hal::DType d = to_hal(c.dtype);
  auto ints = [&](std::size_t i) { return reinterpret_cast<const std::int32_t*>(data_or_dummy(in.at(i))); };
  auto floats = [&](std::size_t i) { return reinterpret_cast<const float*>(data_or_dummy(in.at(i))); };
  // Poisoned output: a backend that writes nothing must not pass.
  std::vector<std::uint8_t> result;
  std::vector<std::uint8_t> sink(1);
  auto out_ptr = [&] { return result.empty() ? sink.data() : result.data(); };
  hal::Status s;
  switch (c.op) {
    case Op::kRmsNorm:
      result.assign(c.shape.m * c.shape.n * elem, std::uint8_t{0x7F});
      s = hal::rmsnorm_host(be_, d, c.shape.m, c.shape.n, kRmsNormEps, data_or_dummy(in.at(0)),
                            data_or_dummy(in.at(1)), out_ptr());
      break;
    case Op::kRope:
      result = in.at(0);  // rotated in place
      s = hal::rope_host(be_, d, rope_shape(c), out_ptr(), ints(1), floats(2), floats(3));
      break;
    case Op::kSiluMul:
      result.assign(c.shape.m * c.shape.n * elem, std::uint8_t{0x7F});
      s = hal::silu_mul_host(be_, d, c.shape.m, c.shape.n, data_or_dummy(in.at(0)), out_ptr());
      break;
    case Op::kPagedAttention: {
      const hal::AttentionShape shape = attention_shape(c, in.at(4).size() / 4);
      result.assign(shape.rows * shape.q_heads * shape.head_dim * elem, std::uint8_t{0x7F});
      const hal::AttentionHostData data{data_or_dummy(in.at(0)), data_or_dummy(in.at(1)), data_or_dummy(in.at(2)),
                                        ints(3), ints(4), ints(5)};
      s = hal::paged_attention_host(be_, d, shape, data, out_ptr());
      break;
    }
    default:
      return RunOutcome{false, fmt::format("{} is not a decoder-layer op", name_of(c.op)), {}};
  }
  if (!s.ok()) return failed(s);
  return RunOutcome{true, {}, std::move(result)};
}

RunOutcome HalTarget::run(const Case& c, const std::vector<std::vector<std::uint8_t>>& in) {
  if (c.op == Op::kBuffer) return run_buffer(c, in.at(0));
  if (c.op != Op::kMatmul && c.op != Op::kSoftmax) return run_layer_op(c, in);
  const auto elem = static_cast<std::uint64_t>(format_of(c.dtype).bytes);
  RunOutcome out;
  std::vector<std::uint8_t> result;
  hal::Status s;
  if (c.op == Op::kMatmul) {
    result.assign(c.shape.m * c.shape.n * elem, 0);
    // Poison the output: a backend that writes nothing must not pass on zeros.
    std::fill(result.begin(), result.end(), std::uint8_t{0x7F});
    std::vector<std::uint8_t> sink(1);
    s = be_.matmul_host(to_hal(c.dtype), c.shape.m, c.shape.n, c.shape.k, data_or_dummy(in.at(0)),
                        data_or_dummy(in.at(1)), result.empty() ? sink.data() : result.data());
  } else {
    result.assign(c.shape.m * c.shape.n * elem, std::uint8_t{0x7F});
    std::vector<std::uint8_t> sink(1);
    s = be_.softmax_host(to_hal(c.dtype), c.shape.m, c.shape.n, data_or_dummy(in.at(0)),
                         result.empty() ? sink.data() : result.data());
  }
  if (!s.ok()) return failed(s);
  out.output = std::move(result);
  return out;
}

std::optional<double> HalTarget::time_matmul(std::uint64_t m, std::uint64_t n, std::uint64_t k,
                                             int reps) {
  if (!be_.declares(hal::Op::kMatmul) || !be_.declares(hal::DType::kF32)) return std::nullopt;
  if (be_.max_dim() != 0 && std::max({m, n, k}) > be_.max_dim()) return std::nullopt;
  auto a = be_.allocate(m * k * 4);
  auto b = be_.allocate(k * n * 4);
  auto c = be_.allocate(m * n * 4);
  if (!a || !b || !c) return std::nullopt;
  // Inputs: small values, so the timing does not run through denormals or infinities.
  std::vector<float> av(m * k), bv(k * n);
  for (std::size_t i = 0; i < av.size(); ++i) av[i] = static_cast<float>(i % 7) * 0.125f - 0.375f;
  for (std::size_t i = 0; i < bv.size(); ++i) bv[i] = static_cast<float>(i % 5) * 0.25f - 0.5f;
  if (!be_.upload(a.value(), av.data(), av.size() * 4).ok() ||
      !be_.upload(b.value(), bv.data(), bv.size() * 4).ok())
    return std::nullopt;
  // Each timed run ends with reading C back: an asynchronous device (CUDA,
  // OpenCL) has finished the work only then. For host backends that is a
  // memcpy of m*n floats, small next to the 2*m*n*k flops.
  std::vector<float> cv(m * n);
  bool ok = true;
  const gpulab::TimingResult t = gpulab::time_repeated(
      [&] {
        ok = ok && be_.matmul(hal::DType::kF32, m, n, k, a.value(), b.value(), c.value()).ok();
        ok = ok && be_.download(cv.data(), c.value(), cv.size() * 4).ok();
      },
      1, std::max(1, reps));
  if (!ok) return std::nullopt;
  return t.min;
}

}  // namespace conformance
