#include "ptxc/suite.hpp"

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

}  // namespace ptxc
