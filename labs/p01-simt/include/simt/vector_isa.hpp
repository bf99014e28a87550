// Which vector instructions the issue loop runs with. The loop is compiled
// three times from one source (src/execute.cpp): for baseline x86-64 (SSE2),
// for x86-64-v3 (AVX2) and for x86-64-v4 (AVX-512), and a run picks the best
// one the CPU has, or the one Config::isa names, so every path can be tested
// on a machine that has it.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace simt {

enum class VectorIsa : std::uint8_t {
  kAuto,      // the best this CPU runs
  kBaseline,  // x86-64: four lanes are two SSE2 operations
  kV3,        // x86-64-v3 (AVX2, BMI2, FMA): four lanes are one AVX2 operation
  kV4,        // x86-64-v4 (AVX-512 F/BW/DQ/VL): the same 256-bit vectors, with a native
              // 64-bit multiply and compares into mask registers
};

std::string_view vector_isa_name(VectorIsa isa);  // "auto", "x86-64", "x86-64-v3", "x86-64-v4"
// kAuto and kBaseline always; the others when this CPU (and this build) has them.
bool vector_isa_supported(VectorIsa isa);
// Baseline first; kAuto is not listed.
std::vector<VectorIsa> supported_vector_isas();
// kAuto resolved: the last of supported_vector_isas().
VectorIsa best_vector_isa();

}  // namespace simt
