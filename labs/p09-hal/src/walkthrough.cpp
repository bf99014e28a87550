#include "hal/walkthrough.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace gpulab::hal {

bool Walkthrough::fp32_all_pass() const {
  return std::all_of(backends.begin(), backends.end(), [](const BackendReport& b) {
    return !b.fp32_matmul.declared || b.fp32_matmul.pass;
  });
}

bool Walkthrough::layer_ops_all_pass() const {
  return std::all_of(backends.begin(), backends.end(), [](const BackendReport& b) {
    return std::all_of(b.layer_ops.begin(), b.layer_ops.end(),
                       [](const LayerOpCheck& c) { return !c.result.declared || c.result.pass; });
  });
}

namespace {
// The decoder-layer checks run on a layer of the walkthrough's width: rows m,
// n wide (rope: 4 heads of 8; attention: the default AttentionSpec).
CheckResult check_layer_op(const Backend& b, Op op, const WalkthroughOptions& o) {
  switch (op) {
    case Op::kRmsNorm: return check_rmsnorm(b, DType::kF32, o.m, o.n, o.seed);
    case Op::kRope: return check_rope(b, DType::kF32, o.m, 4, 8, o.seed);
    case Op::kSiluMul: return check_silu_mul(b, DType::kF32, o.m, o.n, o.seed);
    case Op::kPagedAttention: return check_paged_attention(b, DType::kF32, AttentionSpec{}, o.seed);
    default: return {};
  }
}

std::string failure_summary(std::string_view what, const CheckResult& r) {
  if (!r.status.ok()) return fmt::format("{} returned {}", what, describe(r.status));
  return fmt::format("{} off by {:.3g}x its tolerance", what, r.worst_ratio);
}

RouteReport route_one(const Registry& reg, const Request& req) {
  RouteReport out;
  out.request = req;
  auto routed = reg.route(req);
  if (!routed) {
    out.refused = true;
    out.reason = routed.error().message;
    return out;
  }
  out.target = std::string(routed.value()->name());
  // Count who else could have taken it, and who was kept out by the gate.
  std::size_t capable = 0;
  std::vector<std::string> gated;
  for (const auto& b : reg.backends()) {
    if (!b->accepts(req)) continue;
    if (reg.quarantine_reason(b->name())) {
      gated.emplace_back(b->name());
    } else {
      ++capable;
    }
  }
  const std::string what = req.op == Op::kMatmul ? std::string(flag_name(req.dtype))
                                                 : fmt::format("{} {}", flag_name(req.dtype), op_name(req.op));
  out.reason = capable > 1 ? fmt::format("highest perf among {}-capable", what)
                           : fmt::format("only {}-capable backend", what);
  for (const auto& g : gated) out.reason += fmt::format("; {} quarantined", g);
  return out;
}
}  // namespace

Walkthrough run_walkthrough(Registry& reg, const WalkthroughOptions& o) {
  Walkthrough w;
  for (const auto& b : reg.backends()) {
    BackendReport r;
    r.name = std::string(b->name());
    r.fp32_matmul = check_matmul(*b, DType::kF32, o.m, o.n, o.k, o.seed);
    for (Op op : kLayerOps) r.layer_ops.push_back({op, check_layer_op(*b, op, o)});
    std::string failed;
    if (r.fp32_matmul.declared && !r.fp32_matmul.pass) failed = failure_summary("FP32 matmul", r.fp32_matmul);
    for (DType d : kAllDTypes) {
      if (d == DType::kF32 || !b->declares(d)) continue;
      DTypeCheck c{d, check_matmul(*b, d, o.m, o.n, o.k, o.seed), check_softmax(*b, d, o.m, o.n, o.seed)};
      if (failed.empty() && c.matmul.declared && !c.matmul.pass)
        failed = failure_summary(fmt::format("declared {}, {} matmul", flag_name(d), request_name(d)), c.matmul);
      if (failed.empty() && c.softmax.declared && !c.softmax.pass)
        failed = failure_summary(fmt::format("declared {}, {} softmax", flag_name(d), request_name(d)), c.softmax);
      r.other_dtypes.push_back(std::move(c));
    }
    for (const LayerOpCheck& c : r.layer_ops)
      if (failed.empty() && c.result.declared && !c.result.pass)
        failed = failure_summary(fmt::format("FP32 {}", op_name(c.op)), c.result);
    if (o.gate && !failed.empty()) {
      r.quarantined = true;
      r.quarantine_reason = failed;
      reg.quarantine(r.name, failed);
    }
    w.backends.push_back(std::move(r));
  }
  for (DType d : kAllDTypes) w.routes.push_back(route_one(reg, {Op::kMatmul, d, o.m, o.n, o.k}));
  w.routes.push_back(route_one(reg, {Op::kSoftmax, DType::kF32, o.m, o.n, 0}));
  w.routes.push_back(route_one(reg, {Op::kPagedAttention, DType::kF32, o.m, o.n, 16}));
  return w;
}

}  // namespace gpulab::hal
