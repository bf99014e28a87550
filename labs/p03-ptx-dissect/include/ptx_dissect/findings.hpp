// The findings sheet, checked automatically. Each Finding is one thing the
// curriculum asks the learner to find, with what was found and a verdict.
// Inputs are the artifacts the build made with nvcc (see CMakeLists.txt):
//   kernels.ptx          nvcc -ptx -arch=sm_80
//   kernels-nofma.ptx    ... -fmad=false
//   ptxas-v.txt          nvcc -cubin -arch=sm_80 -Xptxas=-v   (stderr)
//   ptxas-maxrreg16.txt  ... -maxrregcount=16                  (stderr)
//   kernels.cubin, kernels-maxrreg16.cubin
//   fat.fatbin           the -gencode matrix (sm_80, sm_90, compute_90)
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
// SASS checks with cuobjdump; each is a kSkip with the reason when the tool is absent.
std::vector<Finding> check_sass(const std::filesystem::path& artifacts);

// All of the above from an artifacts directory. Throws gpulab::Unsupported when
// the directory was never built (no nvcc at build time).
std::vector<Finding> run_all_checks(const std::filesystem::path& artifacts);

}  // namespace ptx_dissect
