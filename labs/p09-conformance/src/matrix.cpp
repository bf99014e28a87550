#include "conformance/matrix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace conformance {

std::string_view name_of(Op op) {
  switch (op) {
    case Op::kBuffer:
      return "buffer";
    case Op::kMatmul:
      return "matmul";
    case Op::kSoftmax:
      return "softmax";
    case Op::kRmsNorm:
      return "rmsnorm";
    case Op::kRope:
      return "rope";
    case Op::kSiluMul:
      return "silu_mul";
    case Op::kPagedAttention:
      return "paged_attention";
  }
  return "?";
}

std::optional<Op> parse_op(std::string_view s) {
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (Op op : kAllOps)
    if (lower == name_of(op)) return op;
  return std::nullopt;
}

std::string label(Op op, const Shape& s) {
  switch (op) {
    case Op::kBuffer:
      return fmt::format("{}B@{}", s.m, s.n);
    case Op::kMatmul:
      return fmt::format("{}x{}x{}", s.m, s.n, s.k);
    case Op::kSoftmax:
    case Op::kRmsNorm:
    case Op::kSiluMul:
      return fmt::format("{}x{}", s.m, s.n);
    case Op::kRope:
      return fmt::format("{}x{}hx{}", s.m, s.n, s.k);
    case Op::kPagedAttention:
      return fmt::format("{}x{}x{} h{}/{} b{} q{}", s.m, s.n, s.k, s.q_heads, s.kv_heads, s.block, s.queries);
  }
  return "?";
}

std::string describe(const Case& c) {
  if (!op_has_dtype(c.op)) return fmt::format("{} {}", name_of(c.op), label(c.op, c.shape));
  return fmt::format("{} {} {}", name_of(c.op), name_of(c.dtype), label(c.op, c.shape));
}

std::string capability_id(std::string_view backend, Op op, DType dtype) {
  if (!op_has_dtype(op)) return fmt::format("{}/{}", backend, name_of(op));
  return fmt::format("{}/{}/{}", backend, name_of(dtype), name_of(op));
}

std::vector<Shape> shapes_for(Op op, bool large) {
  std::vector<Shape> s;
  switch (op) {
    case Op::kBuffer:
      s = {{1, 0, 0, "one byte"},
           {64, 0, 0, "aligned"},
           {4099, 13, 0, "prime size, odd offset"},
           {0, 7, 0, "zero bytes"}};
      if (large) s.push_back({(std::uint64_t{1} << 24) + 5, 3, 0, "16 MiB"});
      break;
    case Op::kMatmul:
      s = {{1, 1, 1, "1x1"},
           {0, 5, 3, "m = 0"},
           {4, 3, 0, "k = 0: zeros"},
           {7, 13, 5, "primes"},
           {31, 17, 23, "primes"},
           {257, 3, 2, "tall-skinny"},
           {2, 3, 257, "long reduction"},
           {64, 64, 64, "square"}};
      if (large) {
        s.push_back({127, 129, 131, "around a tile size"});
        s.push_back({256, 256, 256, "square"});
        s.push_back({1, 1024, 1024, "vector x matrix"});
        s.push_back({509, 521, 523, "large primes"});
      }
      break;
    case Op::kSoftmax:
      s = {{1, 1, 0, "1x1"},     {0, 4, 0, "rows = 0"},          {3, 257, 0, "wide rows"},
           {7, 13, 0, "primes"}, {129, 3, 0, "many short rows"}, {16, 64, 0, "square-ish"}};
      if (large) {
        s.push_back({64, 4099, 0, "long rows"});
        s.push_back({1024, 1024, 0, "large"});
      }
      break;
    case Op::kRmsNorm:
      s = {{1, 1, 0, "1x1"},        {0, 8, 0, "rows = 0"},   {5, 13, 0, "primes"},
           {3, 1031, 0, "long rows"}, {33, 64, 0, "model width"}};
      if (large) s.push_back({256, 4096, 0, "large"});
      break;
    case Op::kRope:
      s = {{1, 1, 2, "one pair"}, {0, 2, 8, "rows = 0"}, {7, 3, 10, "odd pairs"}, {9, 4, 64, "model heads"}};
      if (large) s.push_back({512, 32, 128, "large"});
      break;
    case Op::kSiluMul:
      s = {{1, 1, 0, "1x1"}, {0, 4, 0, "rows = 0"}, {7, 13, 0, "primes"}, {4, 257, 0, "wide rows"}};
      if (large) s.push_back({256, 11008, 0, "large"});
      break;
    case Op::kPagedAttention:
      s = {{1, 1, 1, "one token", 1, 1, 1, 1},
           {5, 19, 16, "decode, grouped heads", 4, 2, 4, 1},
           {3, 23, 8, "chunked prefill", 8, 2, 4, 6},
           {2, 12, 10, "multi-head, odd blocks", 3, 3, 5, 3},
           {4, 9, 6, "multi-query, one-slot blocks", 6, 1, 1, 2},
           {2, 300, 64, "long context", 4, 2, 16, 2}};
      if (large) s.push_back({16, 2048, 128, "large", 32, 8, 16, 4});
      break;
  }
  return s;
}

namespace {
// SplitMix64's finaliser: a case's inputs depend on its identity and the seed
// only, so filtering the matrix (--op, --dtype) never changes a case's numbers.
std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  std::uint64_t z = h + 0x9E3779B97F4A7C15ull + v;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
}  // namespace

std::vector<Case> build_matrix(const MatrixOptions& opts) {
  std::vector<Case> cases;
  for (Op op : kAllOps) {
    if (std::find(opts.ops.begin(), opts.ops.end(), op) == opts.ops.end()) continue;
    std::vector<DType> dtypes;
    if (op_has_dtype(op)) {
      for (DType t : kAllDTypes)
        if (std::find(opts.dtypes.begin(), opts.dtypes.end(), t) != opts.dtypes.end())
          dtypes.push_back(t);
    } else {
      dtypes.push_back(DType::kF32);
    }
    for (DType t : dtypes) {
      for (const Shape& s : shapes_for(op, opts.large)) {
        std::uint64_t case_seed = mix(opts.seed, static_cast<std::uint64_t>(op));
        case_seed = mix(case_seed, static_cast<std::uint64_t>(t));
        for (std::uint64_t v : {s.m, s.n, s.k}) case_seed = mix(case_seed, v);
        if (op == Op::kPagedAttention)
          for (std::uint64_t v : {s.q_heads, s.kv_heads, s.block, s.queries}) case_seed = mix(case_seed, v);
        cases.push_back(Case{op, t, s, case_seed});
      }
    }
  }
  return cases;
}

std::uint64_t largest_dim(const Case& c) {
  switch (c.op) {
    case Op::kBuffer:
      return 0;
    case Op::kMatmul:
      return std::max({c.shape.m, c.shape.n, c.shape.k});
    case Op::kSoftmax:
    case Op::kRmsNorm:
    case Op::kSiluMul:
      return std::max(c.shape.m, c.shape.n);
    case Op::kRope:
    case Op::kPagedAttention:  // the HAL's Request: rows, width/context, head_dim
      return std::max({c.shape.m, c.shape.n, c.shape.k});
  }
  return 0;
}

}  // namespace conformance
