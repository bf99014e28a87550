// The findings sheet, checked automatically. Each Finding is one thing the
// curriculum asks the learner to find, with what was found and a verdict.
// Inputs are the artifacts the build made with nvcc (see CMakeLists.txt):
//   kernels.ptx          nvcc -ptx -arch=sm_80
//   kernels-nofma.ptx    ... -fmad=false
//   ptxas-v.txt          nvcc -cubin -arch=sm_80 -Xptxas=-v   (stderr)
//   ptxas-maxrreg16.txt  ... -maxrregcount=16                  (stderr)
//   kernels.cubin, kernels-maxrreg16.cubin
//   fat.fatbin           the -gencode matrix (sm_80, sm_90, compute_90)
//   wmma.ptx, wmma.cubin kernels/wmma.cu for sm_80 (the tensor-core extension)
// and, for the SASS rows, cuobjdump --dump-sass on the three cubins.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ptx_dissect {

struct Finding {
  enum class Status { kPass, kFail, kSkip };
  std::string kernel;  // "saxpy"
  std::string check;   // ".param ABI + ld.param prologue"
  std::string found;   // what the artifacts show
  Status status = Status::kPass;
};

std::string_view status_name(Finding::Status s);

// PTX-level checks on nvcc's output (no GPU, no cuobjdump needed).
std::vector<Finding> check_ptx(const std::string& ptx, const std::string& ptx_nofma);
// Register and spill checks from the two ptxas -v reports.
std::vector<Finding> check_ptxas(const std::string& report, const std::string& report_maxrreg16);
// The fatbin's table of contents against the -gencode matrix.
std::vector<Finding> check_fatbin(const std::vector<std::uint8_t>& fatbin);
// The wmma extension in PTX: the 16x16x16 tile product is one wmma.mma.sync.
std::vector<Finding> check_wmma_ptx(const std::string& wmma_ptx);

// What cuobjdump --dump-sass printed for each cubin.
struct SassDumps {
  std::string kernels;    // kernels.cubin
  std::string maxrreg16;  // kernels-maxrreg16.cubin
  std::string wmma;       // wmma.cubin
};
// The SASS rows: FFMA in saxpy, the if body predicated in guarded, the unrolled
// loads, LDL/STL in the capped spiller, HMMA in wmma16.
std::vector<Finding> check_sass_dumps(const SassDumps& dumps);
// Runs cuobjdump (a path; "" when the build found none) on the cubins and checks the
// listings. Without the tool every row is a kSkip that says how to install it; a
// cuobjdump that fails on a cubin makes its rows kFail with the tool's first line.
std::vector<Finding> check_sass(const std::filesystem::path& artifacts,
                                const std::string& cuobjdump);

// All of the above from an artifacts directory. Throws gpulab::Unsupported when
// the directory was never built (no nvcc at build time).
std::vector<Finding> run_all_checks(const std::filesystem::path& artifacts,
                                    const std::string& cuobjdump);

}  // namespace ptx_dissect
