#include "ptxc/reference.hpp"

#include <cmath>
#include <map>
#include <string>

#include "ptxc/intrinsics.hpp"

namespace ptxc {

namespace {

struct Env {
  const Kernel& kernel;
  std::vector<std::vector<float>>& buffers;
  const std::vector<float>& scalars;
  std::map<std::string, std::size_t, std::less<>> params;
  std::map<std::string, float, std::less<>> lets;
  std::size_t i = 0;
};

float eval(const Expr& e, const Env& env) {
  switch (e.kind) {
    case ExprKind::kNumber:
      return e.value;
    case ExprKind::kVar:
      if (const auto it = env.lets.find(e.name); it != env.lets.end()) return it->second;
      return env.scalars[env.params.at(e.name)];
    case ExprKind::kIndex:
      return env.buffers[env.params.at(e.name)][env.i];
    case ExprKind::kUnary:
      return -eval(*e.args[0], env);
    case ExprKind::kBinary: {
      const float x = eval(*e.args[0], env);
      const float y = eval(*e.args[1], env);
      switch (e.op) {
        case '+':
          return x + y;
        case '-':
          return x - y;
        case '*':
          return x * y;
        default:
          return x / y;
      }
    }
    case ExprKind::kCall: {
      const float x = eval(*e.args[0], env);
      switch (find_intrinsic(e.name)->id) {
        case Intrinsic::kMin:
          return std::fmin(x, eval(*e.args[1], env));
        case Intrinsic::kMax:
          return std::fmax(x, eval(*e.args[1], env));
        case Intrinsic::kRelu:
          return std::fmax(x, 0.0F);
        case Intrinsic::kAbs:
          return std::fabs(x);
        case Intrinsic::kSqrt:
          return std::sqrt(x);
      }
    }
  }
  return 0.0F;
}

}  // namespace

void evaluate_reference(const Kernel& kernel, std::vector<std::vector<float>>& buffers,
                        const std::vector<float>& scalars, int n) {
  Env env{kernel, buffers, scalars, {}, {}, 0};
  for (std::size_t p = 0; p < kernel.params.size(); ++p) env.params[kernel.params[p].name] = p;
  for (int i = 0; i < n; ++i) {
    env.i = static_cast<std::size_t>(i);
    env.lets.clear();
    for (const auto& s : kernel.body) {
      const float value = eval(*s.value, env);
      if (s.kind == StmtKind::kLet)
        env.lets[s.name] = value;
      else
        buffers[env.params.at(s.name)][env.i] = value;
    }
  }
}

}  // namespace ptxc
