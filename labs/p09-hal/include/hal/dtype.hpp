// Element types and operations as C++ values, their names, and the host-side
// conversions between binary32 and the narrow formats the ABI carries
// (F16, BF16, FP8 E4M3), so clients can build inputs and read results.
#pragma once

#include <gpulab_hal/gpulab_hal.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpulab::hal {

enum class DType : std::uint32_t {
  kF32 = GPULAB_HAL_DTYPE_F32,
  kF16 = GPULAB_HAL_DTYPE_F16,
  kBF16 = GPULAB_HAL_DTYPE_BF16,
  kFP8 = GPULAB_HAL_DTYPE_FP8,
  kINT8 = GPULAB_HAL_DTYPE_INT8,
};
inline constexpr DType kAllDTypes[] = {DType::kF32, DType::kF16, DType::kBF16, DType::kFP8};

enum class Op : std::uint32_t {
  kBuffer = GPULAB_HAL_OP_BUFFER,
  kMatmul = GPULAB_HAL_OP_MATMUL,
  kSoftmax = GPULAB_HAL_OP_SOFTMAX,
  // ABI 2.2: the decoder-layer ops.
  kRmsNorm = GPULAB_HAL_OP_RMSNORM,
  kRope = GPULAB_HAL_OP_ROPE,
  kSiluMul = GPULAB_HAL_OP_SILU_MUL,
  kPagedAttention = GPULAB_HAL_OP_PAGED_ATTENTION,
};
inline constexpr Op kComputeOps[] = {Op::kMatmul, Op::kSoftmax};
inline constexpr Op kLayerOps[] = {Op::kRmsNorm, Op::kRope, Op::kSiluMul, Op::kPagedAttention};
inline constexpr Op kAllOps[] = {Op::kBuffer,  Op::kMatmul,  Op::kSoftmax,       Op::kRmsNorm,
                                 Op::kRope,    Op::kSiluMul, Op::kPagedAttention};

constexpr std::uint32_t bit(DType d) { return static_cast<std::uint32_t>(d); }
constexpr std::uint32_t bit(Op o) { return static_cast<std::uint32_t>(o); }
inline std::uint64_t element_size(DType d) { return gpulab_hal_dtype_size(bit(d)); }

// Capability-flag spelling: "F32", "F16", "BF16", "FP8", "INT8".
std::string_view flag_name(DType d);
// Request spelling, as the curriculum prints routing lines: "FP32", "FP16", "BF16", "FP8", "INT8".
std::string_view request_name(DType d);
// "matmul", "softmax", "buffer", "rmsnorm", "rope", "silu_mul", "paged_attention".
std::string_view op_name(Op o);
// A mask as "F32|F16" ("-" when empty); ops as "buffer|matmul".
std::string dtype_mask_string(std::uint32_t mask);
std::string op_mask_string(std::uint32_t mask);
// Accepts either spelling, case-insensitive ("fp16", "F16"); nullopt if unknown.
std::optional<DType> parse_dtype(std::string_view text);
std::optional<Op> parse_op(std::string_view text);

// Round-to-nearest-even conversions.
std::uint16_t float_to_half(float f);
float half_to_float(std::uint16_t h);
std::uint16_t float_to_bf16(float f);
float bf16_to_float(std::uint16_t b);
std::uint8_t float_to_fp8_e4m3(float f);  // saturates to +-448, NaN stays NaN
float fp8_e4m3_to_float(std::uint8_t v);

// Encodes binary32 values into a byte buffer of `d` (what copy_to_device takes),
// and decodes such a buffer back into binary32.
std::vector<std::uint8_t> encode(DType d, const std::vector<float>& values);
std::vector<float> decode(DType d, const void* bytes, std::uint64_t count);
// The value `f` becomes after one round trip through `d` (the exact input a
// backend sees when a client encodes `f`).
float quantize(DType d, float f);

}  // namespace gpulab::hal
