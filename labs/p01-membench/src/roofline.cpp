#include "membench/roofline.hpp"

#include <algorithm>
#include <cctype>

namespace membench {
namespace {

// Vendor datasheets, dense BF16/FP16 tensor-core figures (sparsity doubles them; not used).
constexpr Accelerator kTable[] = {
    {"A100-40GB", 312.0, 1.555, 40,
     "NVIDIA A100 datasheet (SXM4 40GB): 312 TFLOPS BF16, 1,555 GB/s HBM2"},
    {"A100-80GB", 312.0, 2.039, 80,
     "NVIDIA A100 datasheet (SXM4 80GB): 312 TFLOPS BF16, 2,039 GB/s HBM2e"},
    {"H100-SXM", 989.0, 3.35, 80,
     "NVIDIA H100 datasheet (SXM5): 989 TFLOPS BF16 dense, 3.35 TB/s HBM3"},
    {"H200-SXM", 989.0, 4.8, 141,
     "NVIDIA H200 datasheet (SXM): 989 TFLOPS BF16 dense, 4.8 TB/s HBM3e"},
    {"MI300X", 1307.4, 5.3, 192,
     "AMD Instinct MI300X datasheet: 1,307.4 TFLOPS BF16 dense, 5.3 TB/s HBM3"},
    {"T4", 65.0, 0.32, 16, "NVIDIA T4 datasheet: 65 TFLOPS FP16 mixed precision, 320 GB/s GDDR6"},
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

double blocked_matmul_ai(int block) {
  return static_cast<double>(block) / 6.0;
}

double attainable(double peak, double bandwidth, double ai) {
  return std::min(peak, ai * bandwidth);
}

double ridge_point(double peak, double bandwidth) {
  return peak / bandwidth;
}

std::string_view bound_verdict(double ai, double ridge) {
  return ai < ridge ? "memory-bound" : "compute-bound";
}

std::span<const Accelerator> accelerator_table() {
  return kTable;
}

std::optional<Accelerator> find_accelerator(std::string_view name) {
  const auto want = lower(name);
  for (const auto& a : kTable)
    if (lower(a.name) == want) return a;
  return std::nullopt;
}

double decode_tokens_per_s(double bandwidth_tbs, double params_billion, double bytes_per_param) {
  return bandwidth_tbs * 1e12 / (params_billion * 1e9 * bytes_per_param);
}

double decode_ai(double bytes_per_param) {
  return 2.0 / bytes_per_param;
}

}  // namespace membench
