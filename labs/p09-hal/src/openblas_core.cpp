#include "hal/openblas_core.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace gpulab::hal {
namespace {

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// The corename[] list of OpenBLAS 0.3's driver/others/dynamic.c, each with the
// widest vector ISA its sgemm kernels use.
constexpr std::array<std::pair<std::string_view, VectorIsa>, 25> kCores{{
    {"Katmai", VectorIsa::kSse},        {"Coppermine", VectorIsa::kSse},
    {"Northwood", VectorIsa::kSse},     {"Prescott", VectorIsa::kSse},
    {"Banias", VectorIsa::kSse},        {"Atom", VectorIsa::kSse},
    {"Core2", VectorIsa::kSse},         {"Penryn", VectorIsa::kSse},
    {"Dunnington", VectorIsa::kSse},    {"Nehalem", VectorIsa::kSse},
    {"Opteron", VectorIsa::kSse},       {"Opteron(SSE3)", VectorIsa::kSse},
    {"Barcelona", VectorIsa::kSse},     {"Nano", VectorIsa::kSse},
    {"Bobcat", VectorIsa::kSse},        {"Sandybridge", VectorIsa::kAvx},
    {"Bulldozer", VectorIsa::kAvx},     {"Piledriver", VectorIsa::kAvx},
    {"Steamroller", VectorIsa::kAvx},   {"Excavator", VectorIsa::kAvx},
    {"Haswell", VectorIsa::kAvx2},      {"Zen", VectorIsa::kAvx2},
    {"SkylakeX", VectorIsa::kAvx512},   {"Cooperlake", VectorIsa::kAvx512},
    {"SapphireRapids", VectorIsa::kAvx512},
}};

std::string coretype_for(VectorIsa isa, const CpuFeatures& cpu) {
  switch (isa) {
    case VectorIsa::kAvx512:
      return cpu.avx512bf16 ? "Cooperlake" : "SkylakeX";
    case VectorIsa::kAvx2:
      return "Haswell";
    case VectorIsa::kAvx:
      return "Sandybridge";
    case VectorIsa::kSse:
    case VectorIsa::kUnknown:
      break;
  }
  return "";
}

}  // namespace

std::string_view vector_isa_name(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::kSse:
      return "SSE";
    case VectorIsa::kAvx:
      return "AVX";
    case VectorIsa::kAvx2:
      return "AVX2+FMA";
    case VectorIsa::kAvx512:
      return "AVX-512";
    case VectorIsa::kUnknown:
      break;
  }
  return "unknown";
}

CpuFeatures this_cpu_features() {
  __builtin_cpu_init();
  CpuFeatures f;
  f.avx = __builtin_cpu_supports("avx") != 0;
  f.avx2 = __builtin_cpu_supports("avx2") != 0;
  f.fma = __builtin_cpu_supports("fma") != 0;
  f.avx512f = __builtin_cpu_supports("avx512f") != 0;
  f.avx512bw = __builtin_cpu_supports("avx512bw") != 0;
  f.avx512dq = __builtin_cpu_supports("avx512dq") != 0;
  f.avx512vl = __builtin_cpu_supports("avx512vl") != 0;
  f.avx512bf16 = __builtin_cpu_supports("avx512bf16") != 0;
  return f;
}

VectorIsa widest_isa(const CpuFeatures& cpu) {
  if (cpu.avx512f && cpu.avx512bw && cpu.avx512dq && cpu.avx512vl) return VectorIsa::kAvx512;
  if (cpu.avx2 && cpu.fma) return VectorIsa::kAvx2;
  if (cpu.avx) return VectorIsa::kAvx;
  return VectorIsa::kSse;
}

VectorIsa openblas_core_isa(std::string_view corename) {
  for (const auto& [name, isa] : kCores)
    if (same_name(name, corename)) return isa;
  return VectorIsa::kUnknown;
}

OpenblasCoreVerdict judge_openblas_core(std::string_view corename, const CpuFeatures& cpu) {
  OpenblasCoreVerdict v;
  v.core = std::string(corename);
  v.core_isa = openblas_core_isa(corename);
  v.cpu_isa = widest_isa(cpu);
  if (v.core_isa == VectorIsa::kUnknown)
    v.kind = OpenblasCoreVerdict::Kind::kUnknownCore;
  else if (v.core_isa < v.cpu_isa)
    v.kind = OpenblasCoreVerdict::Kind::kMisdetected;
  if (v.kind != OpenblasCoreVerdict::Kind::kFair) v.coretype = coretype_for(v.cpu_isa, cpu);
  return v;
}

std::string openblas_core_in_device(std::string_view device) {
  constexpr std::string_view kMark = ", core ";
  const auto at = device.find(kMark);
  if (at == std::string_view::npos) return "";
  const std::string_view rest = device.substr(at + kMark.size());
  return std::string(rest.substr(0, rest.find(',')));
}

std::string OpenblasCoreVerdict::describe() const {
  std::string s = "OpenBLAS core " + (core.empty() ? std::string("(none reported)") : core);
  if (core_isa != VectorIsa::kUnknown) s += " (" + std::string(vector_isa_name(core_isa)) + " kernels)";
  s += " on a CPU with " + std::string(vector_isa_name(cpu_isa)) + ": ";
  switch (kind) {
    case Kind::kFair:
      return s + "fair";
    case Kind::kMisdetected:
      s += "misdetected";
      break;
    case Kind::kUnknownCore:
      s += "a core name this check does not know";
      break;
  }
  if (!coretype.empty())
    s += ", OPENBLAS_CORETYPE=" + coretype + " gives it " + std::string(vector_isa_name(cpu_isa)) + " kernels";
  return s;
}

}  // namespace gpulab::hal
