// The differential test: run a kernel's PTX in the interpreter and the AST in
// the reference evaluator on the same random inputs, then compare every
// element of every buffer (inputs included: a kernel must not scribble on
// them). Equality is |got - want| <= max(rtol * |want|, atol): FMA contraction
// legitimately moves the last bit, and near zero a relative test is meaningless.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ptxc/ast.hpp"
#include "ptxc/ptx_interpreter.hpp"
#include "ptxc/ptx_module.hpp"

namespace ptxc {

struct KernelInputs {
  // Indexed like the kernel's parameters; the slot of the other kind is empty/0.
  std::vector<std::vector<float>> buffers;
  std::vector<float> scalars;
};

// Uniform in [-2, 2) from the seed: small enough that products stay far from
// overflow, signed so min/max/relu/abs see both sides.
KernelInputs random_inputs(const std::vector<Param>& params, int n, std::uint64_t seed);

struct PtxRun {
  std::vector<std::vector<float>> buffers;  // every buffer after the launch
  LaunchStats stats;
};

// Launches `entry` over ceil(n / block) blocks with the hidden n last.
// Throws ExecError if the entry's .param list does not match `params` + n,
// MemoryFault on an out-of-bounds access.
PtxRun run_ptx(const ptx::Entry& entry, const std::vector<Param>& params,
               const KernelInputs& inputs, int n, int block);

struct Tolerance {
  double rtol = 1e-5;
  double atol = 1e-5;
};

struct Comparison {
  std::size_t compared = 0;
  std::size_t mismatches = 0;
  double max_abs_error = 0.0;
  std::string first_mismatch;  // "c[17]: got 1.5, want 1.25"
};

// NaN equals NaN (sqrt of a negative is NaN on both sides).
Comparison compare_buffers(const std::vector<Param>& params,
                           const std::vector<std::vector<float>>& want,
                           const std::vector<std::vector<float>>& got, Tolerance tol);

struct DiffOptions {
  int n = 1000;  // deliberately not a multiple of the block: the tail must be guarded
  int block = 128;
  std::uint64_t seed = 1;
  Tolerance tol;
};

struct DiffResult {
  bool pass = false;
  Comparison comparison;
  LaunchStats stats;
  std::string fault;  // a memory fault or execution error, if the launch failed
};

DiffResult run_differential(const Kernel& kernel, const ptx::Entry& entry, const DiffOptions& opts);

// The fault, or "3 of 3000 elements differ, first c[17]: got 1.5, want 1.25".
std::string describe_failure(const DiffResult& r);

// Elements whose f32 bits differ between two runs' buffers: the measure for
// two compilers (or a GPU and the interpreter) that should agree exactly.
std::size_t count_bit_differences(const std::vector<std::vector<float>>& a,
                                  const std::vector<std::vector<float>>& b);

}  // namespace ptxc
