#include "simt/vector_isa.hpp"

namespace simt {

std::string_view vector_isa_name(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::kAuto: return "auto";
    case VectorIsa::kBaseline: return "x86-64";
    case VectorIsa::kV3: return "x86-64-v3";
    case VectorIsa::kV4: return "x86-64-v4";
  }
  return "?";
}

bool vector_isa_supported(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::kAuto:
    case VectorIsa::kBaseline: return true;
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    // The ISA levels as GCC's target("arch=x86-64-vN") compiles for them.
    case VectorIsa::kV3: return __builtin_cpu_supports("x86-64-v3") != 0;
    case VectorIsa::kV4: return __builtin_cpu_supports("x86-64-v4") != 0;
#else
    case VectorIsa::kV3:
    case VectorIsa::kV4: return false;  // this build has only the baseline loop
#endif
  }
  return false;
}

std::vector<VectorIsa> supported_vector_isas() {
  std::vector<VectorIsa> out;
  for (const VectorIsa isa : {VectorIsa::kBaseline, VectorIsa::kV3, VectorIsa::kV4})
    if (vector_isa_supported(isa)) out.push_back(isa);
  return out;
}

VectorIsa best_vector_isa() {
  static const VectorIsa best = supported_vector_isas().back();
  return best;
}

}  // namespace simt
