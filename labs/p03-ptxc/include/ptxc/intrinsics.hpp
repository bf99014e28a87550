// The built-in functions of the language and the PTX each lowers to. Sema
// checks names and arity against this table; lowering, the reference
// evaluator and both backends read it, so adding one touches one row here.
#pragma once

#include <optional>
#include <string_view>

namespace ptxc {

enum class Intrinsic { kMin, kMax, kRelu, kAbs, kSqrt };

struct IntrinsicInfo {
  Intrinsic id;
  std::string_view name;
  int arity;
  std::string_view lowers_to;  // for --help and the README
};

inline constexpr IntrinsicInfo kIntrinsics[] = {
    {Intrinsic::kMin, "min", 2, "min.f32"},
    {Intrinsic::kMax, "max", 2, "max.f32"},
    {Intrinsic::kRelu, "relu", 1, "max.f32 x, 0f00000000"},
    {Intrinsic::kAbs, "abs", 1, "abs.f32"},
    {Intrinsic::kSqrt, "sqrt", 1, "sqrt.rn.f32"},
};

inline std::optional<IntrinsicInfo> find_intrinsic(std::string_view name) {
  for (const auto& info : kIntrinsics)
    if (info.name == name) return info;
  return std::nullopt;
}

}  // namespace ptxc
