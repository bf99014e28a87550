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
      return fmt::format("{}x{}", s.m, s.n);
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
      return std::max(c.shape.m, c.shape.n);
  }
  return 0;
}

}  // namespace conformance
