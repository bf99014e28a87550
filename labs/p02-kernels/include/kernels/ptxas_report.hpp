// Reads what `nvcc -Xptxas=-v` printed: per kernel, the registers, spill
// traffic and shared memory ptxas settled on. The build captures this for
// sm_90 (cmake/ptxas_report.cmake); `cuda-kernels ptxas` prints it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kernels {

struct PtxasEntry {
  std::string kernel;  // demangled, namespaces and parameter list dropped: "matmul_micro<128, 128,
                       // 8, 8, 8>"
  std::string arch;    // "sm_90"
  int registers = 0;
  int stack_bytes = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  int smem_bytes = 0;  // static shared memory
};

// Entries in the order ptxas printed them; lines it does not recognise are skipped.
std::vector<PtxasEntry> parse_ptxas_report(std::string_view text);

// "_ZN7kernels...7vec_addILb1EEEvPKfS3_Pfi" -> "vec_add<true>"; the input itself if it does not
// demangle.
std::string short_kernel_name(const std::string& mangled);

}  // namespace kernels
