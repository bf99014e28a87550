#include "ptxc/differential.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <gpulab/rng.hpp>

#include "ptxc/reference.hpp"

namespace ptxc {

KernelInputs random_inputs(const std::vector<Param>& params, int n, std::uint64_t seed) {
  gpulab::Rng rng(seed);
  KernelInputs in;
  in.buffers.resize(params.size());
  in.scalars.assign(params.size(), 0.0F);
  const auto draw = [&] { return static_cast<float>(rng.uniform01() * 4.0 - 2.0); };
  for (std::size_t p = 0; p < params.size(); ++p) {
    if (params[p].type == Type::kF32) {
      in.scalars[p] = draw();
    } else {
      in.buffers[p].resize(static_cast<std::size_t>(n));
      for (auto& x : in.buffers[p]) x = draw();
    }
  }
  return in;
}

PtxRun run_ptx(const ptx::Entry& entry, const std::vector<Param>& params,
               const KernelInputs& inputs, int n, int block) {
  if (entry.params.size() != params.size() + 1)
    throw ExecError(fmt::format("entry '{}' has {} parameters; the kernel has {} plus n",
                                entry.name, entry.params.size(), params.size()));
  GlobalMemory mem;
  std::vector<std::uint64_t> raw;
  std::vector<std::size_t> buffer_of(params.size(), 0);
  for (std::size_t p = 0; p < params.size(); ++p) {
    const ptx::DType want = params[p].type == Type::kF32Ptr ? ptx::DType::kU64 : ptx::DType::kF32;
    if (entry.params[p].type != want &&
        !(want == ptx::DType::kU64 && entry.params[p].type == ptx::DType::kB64))
      throw ExecError(fmt::format("parameter {} of '{}' ({}) has the wrong PTX type", p, entry.name,
                                  params[p].name));
    if (params[p].type == Type::kF32Ptr) {
      buffer_of[p] = mem.buffer_count();
      raw.push_back(mem.allocate(params[p].name, inputs.buffers[p]));
    } else {
      raw.push_back(std::bit_cast<std::uint32_t>(inputs.scalars[p]));
    }
  }
  raw.push_back(static_cast<std::uint32_t>(n));
  const int grid = std::max(1, (n + block - 1) / block);
  PtxRun run;
  run.stats = launch(entry, raw, {grid, block}, mem);
  run.buffers.resize(params.size());
  for (std::size_t p = 0; p < params.size(); ++p) {
    if (params[p].type != Type::kF32Ptr) continue;
    const auto view = mem.buffer(buffer_of[p]);
    run.buffers[p].assign(view.begin(), view.end());
  }
  return run;
}

Comparison compare_buffers(const std::vector<Param>& params,
                           const std::vector<std::vector<float>>& want,
                           const std::vector<std::vector<float>>& got, Tolerance tol) {
  Comparison c;
  for (std::size_t p = 0; p < params.size(); ++p) {
    if (params[p].type != Type::kF32Ptr) continue;
    for (std::size_t i = 0; i < want[p].size(); ++i) {
      const float w = want[p][i];
      const float g = got[p][i];
      ++c.compared;
      if (std::isnan(w) && std::isnan(g)) continue;
      const double err = std::fabs(static_cast<double>(g) - static_cast<double>(w));
      const bool ok = err <= std::max(tol.rtol * std::fabs(static_cast<double>(w)), tol.atol);
      if (std::isfinite(err)) c.max_abs_error = std::max(c.max_abs_error, err);
      if (!ok) {
        if (c.mismatches == 0)
          c.first_mismatch = fmt::format("{}[{}]: got {}, want {}", params[p].name, i, g, w);
        ++c.mismatches;
      }
    }
  }
  return c;
}

DiffResult run_differential(const Kernel& kernel, const ptx::Entry& entry,
                            const DiffOptions& opts) {
  const KernelInputs inputs = random_inputs(kernel.params, opts.n, opts.seed);
  std::vector<std::vector<float>> want = inputs.buffers;
  evaluate_reference(kernel, want, inputs.scalars, opts.n);
  DiffResult r;
  try {
    const PtxRun run = run_ptx(entry, kernel.params, inputs, opts.n, opts.block);
    r.stats = run.stats;
    r.comparison = compare_buffers(kernel.params, want, run.buffers, opts.tol);
    r.pass = r.comparison.mismatches == 0;
  } catch (const MemoryFault& e) {
    r.fault = e.what();
  } catch (const ExecError& e) {
    r.fault = e.what();
  }
  return r;
}

std::string describe_failure(const DiffResult& r) {
  if (!r.fault.empty()) return r.fault;
  return fmt::format("{} of {} elements differ, first {}", r.comparison.mismatches,
                     r.comparison.compared, r.comparison.first_mismatch);
}

std::size_t count_bit_differences(const std::vector<std::vector<float>>& a,
                                  const std::vector<std::vector<float>>& b) {
  std::size_t n = 0;
  for (std::size_t p = 0; p < a.size() && p < b.size(); ++p) {
    n += a[p].size() > b[p].size() ? a[p].size() - b[p].size() : b[p].size() - a[p].size();
    for (std::size_t i = 0; i < a[p].size() && i < b[p].size(); ++i)
      n += std::bit_cast<std::uint32_t>(a[p][i]) != std::bit_cast<std::uint32_t>(b[p][i]);
  }
  return n;
}

}  // namespace ptxc
