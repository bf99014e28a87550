#include "hal/dtype.hpp"

#include <algorithm>
#include <cctype>

namespace gpulab::hal {

std::string_view flag_name(DType d) {
  switch (d) {
    case DType::kF32: return "F32";
    case DType::kF16: return "F16";
    case DType::kBF16: return "BF16";
    case DType::kFP8: return "FP8";
    case DType::kINT8: return "INT8";
  }
  return "?";
}

std::string_view request_name(DType d) {
  switch (d) {
    case DType::kF32: return "FP32";
    case DType::kF16: return "FP16";
    case DType::kBF16: return "BF16";
    case DType::kFP8: return "FP8";
    case DType::kINT8: return "INT8";
  }
  return "?";
}

std::string_view op_name(Op o) {
  switch (o) {
    case Op::kBuffer: return "buffer";
    case Op::kMatmul: return "matmul";
    case Op::kSoftmax: return "softmax";
    case Op::kRmsNorm: return "rmsnorm";
    case Op::kRope: return "rope";
    case Op::kSiluMul: return "silu_mul";
    case Op::kPagedAttention: return "paged_attention";
  }
  return "?";
}

std::string dtype_mask_string(std::uint32_t mask) {
  std::string out;
  for (DType d : {DType::kF32, DType::kF16, DType::kBF16, DType::kFP8, DType::kINT8}) {
    if ((mask & bit(d)) == 0) continue;
    if (!out.empty()) out += '|';
    out += flag_name(d);
  }
  return out.empty() ? "-" : out;
}

std::string op_mask_string(std::uint32_t mask) {
  std::string out;
  for (Op o : kAllOps) {
    if ((mask & bit(o)) == 0) continue;
    if (!out.empty()) out += '|';
    out += op_name(o);
  }
  return out.empty() ? "-" : out;
}

namespace {
std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}
}  // namespace

std::optional<DType> parse_dtype(std::string_view text) {
  const std::string t = lower(text);
  if (t == "f32" || t == "fp32") return DType::kF32;
  if (t == "f16" || t == "fp16") return DType::kF16;
  if (t == "bf16") return DType::kBF16;
  if (t == "fp8" || t == "f8" || t == "e4m3") return DType::kFP8;
  if (t == "int8" || t == "i8") return DType::kINT8;
  return std::nullopt;
}

std::optional<Op> parse_op(std::string_view text) {
  const std::string t = lower(text);
  for (Op o : kAllOps)
    if (t == op_name(o)) return o;
  return std::nullopt;
}

// One implementation for core and backends: the static inline helpers of the ABI header.
std::uint16_t float_to_half(float f) { return gpulab_hal_f32_to_f16(f); }
float half_to_float(std::uint16_t h) { return gpulab_hal_f16_to_f32(h); }
std::uint16_t float_to_bf16(float f) { return gpulab_hal_f32_to_bf16(f); }
float bf16_to_float(std::uint16_t b) { return gpulab_hal_bf16_to_f32(b); }
std::uint8_t float_to_fp8_e4m3(float f) { return gpulab_hal_f32_to_fp8(f); }
float fp8_e4m3_to_float(std::uint8_t v) { return gpulab_hal_fp8_to_f32(v); }

std::vector<std::uint8_t> encode(DType d, const std::vector<float>& values) {
  std::vector<std::uint8_t> out(values.size() * static_cast<std::size_t>(element_size(d)));
  for (std::size_t i = 0; i < values.size(); ++i) gpulab_hal_store(bit(d), out.data(), i, values[i]);
  return out;
}

std::vector<float> decode(DType d, const void* bytes, std::uint64_t count) {
  std::vector<float> out(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = gpulab_hal_load(bit(d), bytes, i);
  return out;
}

float quantize(DType d, float f) {
  const auto bytes = encode(d, {f});
  return decode(d, bytes.data(), 1)[0];
}

}  // namespace gpulab::hal
