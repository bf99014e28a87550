// Is OpenBLAS a fair peer on this CPU? A DYNAMIC_ARCH OpenBLAS (Debian's)
// picks its kernels for the CPU model it recognises when it loads, and falls
// back to old SSE3 ones ("Prescott") for a model newer than its release: on an
// AVX-512 Xeon it then runs at a quarter of what it can, and a comparison with
// it flatters whatever it is compared with. This judges the core OpenBLAS
// reports (openblas_get_corename()) against the CPU's own features, and names
// the OPENBLAS_CORETYPE that gives it kernels this CPU runs. The variable is
// read when the library initialises, so it must be set before OpenBLAS loads:
// a program linked with it re-executes itself (bench-hal), one that loads it
// later by dlopen sets it first.
#pragma once

#include <string>
#include <string_view>

namespace gpulab::hal {

// The widest vector ISA of a set of kernels or a CPU.
enum class VectorIsa { kUnknown, kSse, kAvx, kAvx2, kAvx512 };
std::string_view vector_isa_name(VectorIsa isa);  // "SSE", "AVX", "AVX2+FMA", "AVX-512"

// The CPU features that decide which OpenBLAS kernels can run.
struct CpuFeatures {
  bool avx = false, avx2 = false, fma = false;
  bool avx512f = false, avx512bw = false, avx512dq = false, avx512vl = false;
  bool avx512bf16 = false;
};
CpuFeatures this_cpu_features();  // __builtin_cpu_supports (which checks the OS saves the registers)

// The widest ISA OpenBLAS has kernels for that the CPU runs: AVX-512 needs F,
// BW, DQ and VL (what OpenBLAS's SkylakeX kernels use), AVX2 needs FMA too.
VectorIsa widest_isa(const CpuFeatures& cpu);

// The widest ISA of the kernels of an OpenBLAS core, by the names its
// DYNAMIC_ARCH build reports (kUnknown for a name not in its list).
VectorIsa openblas_core_isa(std::string_view corename);

struct OpenblasCoreVerdict {
  enum class Kind { kFair, kMisdetected, kUnknownCore };
  Kind kind = Kind::kFair;
  std::string core;       // as OpenBLAS named it
  VectorIsa core_isa{};   // its kernels' widest ISA
  VectorIsa cpu_isa{};    // the CPU's
  std::string coretype;   // the OPENBLAS_CORETYPE for this CPU ("" when there is none to suggest)
  // One line: "OpenBLAS core Prescott (SSE kernels) on a CPU with AVX-512:
  // misdetected, OPENBLAS_CORETYPE=Cooperlake gives it AVX-512 kernels".
  [[nodiscard]] std::string describe() const;
};

// Fair when the core's kernels are as wide as the widest the CPU runs;
// misdetected when narrower; unknown-core when the name is not one OpenBLAS
// 0.3 reports. coretype is set for the last two whenever the CPU has AVX or
// better: Cooperlake (AVX-512 with BF16), SkylakeX (AVX-512), Haswell (AVX2),
// Sandybridge (AVX).
OpenblasCoreVerdict judge_openblas_core(std::string_view corename, const CpuFeatures& cpu);

// The core named in the blas backend's device line ("OpenBLAS ..., core
// Prescott, 2 threads"); empty when the line names none.
std::string openblas_core_in_device(std::string_view device);

}  // namespace gpulab::hal
