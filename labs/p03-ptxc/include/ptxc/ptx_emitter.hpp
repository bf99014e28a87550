// Backend 1: optimised IR -> a complete, legal PTX module (.version, .target,
// .address_size, .reg declarations, the .param ABI). The shape follows what
// nvcc emits for the same kernels: ld.param prologue, the global index from
// %ctaid.x * %ntid.x + %tid.x, the setp/@%p bra tail guard, then cvta.to.global,
// mul.wide.s32 and add.s64 address arithmetic, ld/st.global.f32.
#pragma once

#include <string>
#include <vector>

#include "ptxc/ir.hpp"

namespace ptxc {

struct EmitOptions {
  std::string target = "sm_75";   // .target; sets the minimum .version
  bool guard = true;              // false: no tail guard (the pitfall, on purpose)
  bool inline_immediates = true;  // constants as 0fXXXXXXXX operands, not mov.f32 (-O1)
};

// The PTX ISA version that introduced `target`; throws std::invalid_argument
// for a target ptxc does not know.
std::string ptx_version_for(const std::string& target);

// 2.0f -> "0f40000000": PTX's exact spelling of an f32 bit pattern.
std::string f32_hex(float value);

// One .visible .entry (no module header).
std::string emit_ptx_entry(const Function& fn, const EmitOptions& opts);
// The module: header, then every kernel.
std::string emit_ptx(const std::vector<Function>& fns, const EmitOptions& opts);

}  // namespace ptxc
