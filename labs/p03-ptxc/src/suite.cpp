#include "ptxc/suite.hpp"

#include "ptxc/compiler.hpp"
#include "ptxc/ptx_module.hpp"

namespace ptxc {

std::string_view builtin_suite_source() {
  return R"(// The curriculum's kernels.
kernel saxpy(a: f32, x: f32*, y: f32*) {
    y[i] = a * x[i] + y[i];
}
kernel scale2(a: f32*, b: f32*, c: f32*) {
    c[i] = a[i] * 2.0 + b[i];
}
kernel vadd(a: f32*, b: f32*, c: f32*) {
    c[i] = a[i] + b[i];
}
kernel lerp(t: f32, a: f32*, b: f32*, c: f32*) {
    c[i] = a[i] + t * (b[i] - a[i]);
}
// Several statements: a let, a store, then a load of what was just stored.
kernel multi(a: f32*, b: f32*, c: f32*, d: f32*) {
    let s = a[i] + b[i];
    c[i] = s * s;
    d[i] = c[i] - s / 2;
}
// Extensions.
kernel clamp(lo: f32, hi: f32, x: f32*, y: f32*) {
    y[i] = min(max(x[i], lo), hi);
}
kernel constfold(a: f32*, c: f32*) {
    c[i] = 2.0 * 4.0 + a[i];
}
kernel sqsum(a: f32*, b: f32*, c: f32*) {
    c[i] = (a[i] + b[i]) * (a[i] + b[i]);
}
kernel relu_fused(a: f32*, b: f32*, c: f32*, d: f32*) {
    d[i] = relu(a[i] * b[i] + c[i]);
}
kernel norm2(a: f32*, b: f32*, c: f32*) {
    c[i] = sqrt(a[i] * a[i] + b[i] * b[i]);
}
)";
}

SuiteRun run_suite(const DiffOptions& opts, const EmitOptions& emit) {
  auto o0_opts = CompileOptions::at_level(0);
  auto o1_opts = CompileOptions::at_level(1);
  o0_opts.emit.target = o1_opts.emit.target = emit.target;
  o0_opts.emit.guard = o1_opts.emit.guard = emit.guard;
  const auto o0 = compile(builtin_suite_source(), "<suite>", o0_opts);
  const auto o1 = compile(builtin_suite_source(), "<suite>", o1_opts);
  const auto m0 = ptx::parse_ptx(o0.ptx);
  const auto m1 = ptx::parse_ptx(o1.ptx);
  SuiteRun run;
  run.ptx_o1 = o1.ptx;
  for (const auto& k : o1.program.kernels) {
    const ptx::Entry& e0 = *m0.find(k.name);
    const ptx::Entry& e1 = *m1.find(k.name);
    run.rows.push_back({k.name, ptx::instruction_count(e0), ptx::instruction_count(e1),
                        run_differential(k, e0, opts), run_differential(k, e1, opts)});
  }
  return run;
}

}  // namespace ptxc
