// In-process backends for the harness's own tests: an honest one that works
// like a real binary32-accumulating backend (optionally in a different
// summation order), and ways to be wrong that conformance must catch.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "conformance/dtype.hpp"
#include "conformance/target.hpp"

namespace fake {

using namespace conformance;

enum class Flaw {
  kNone,
  kF16AsBF16,  // reads F16 inputs as if they were BF16 (the "declares F16, produces garbage" liar)
  kAccumulateInDType,  // rounds the running sum to the dtype after every add
  kNoMaxSubtraction,   // softmax without subtracting the row maximum
  kRefuse,             // returns an error for every declared compute call
  kShortOutput,        // returns one element too few
  kBufferOffByOne,     // copies back starting one byte late
};

class FakeTarget : public Target {
 public:
  FakeTarget(std::string name, std::vector<DType> dtypes, Flaw flaw = Flaw::kNone,
             DType flawed = DType::kF16, bool reverse_order = false)
      : flaw_(flaw), flawed_(flawed), reverse_(reverse_order) {
    info_.name = std::move(name);
    info_.abi = "2.1";
    info_.perf_hint = 1;
    info_.ops = {Op::kBuffer, Op::kMatmul, Op::kSoftmax};
    info_.dtypes = std::move(dtypes);
  }
  BackendInfo& mutable_info() { return info_; }
  [[nodiscard]] const BackendInfo& info() const override { return info_; }
  int calls = 0;

  RunOutcome run(const Case& c, const std::vector<std::vector<std::uint8_t>>& in) override {
    ++calls;
    RunOutcome out;
    const bool flawed = c.dtype == flawed_ || c.op == Op::kBuffer;
    if (c.op == Op::kBuffer) {
      out.output = in[0];
      if (flaw_ == Flaw::kBufferOffByOne && !out.output.empty()) {
        std::rotate(out.output.begin(), out.output.begin() + 1, out.output.end());
      }
      return out;
    }
    if (flaw_ == Flaw::kRefuse && flawed) return RunOutcome{false, "unsupported: refused", {}};
    const DType read_as = flaw_ == Flaw::kF16AsBF16 && flawed ? DType::kBF16 : c.dtype;
    std::vector<std::vector<double>> x;
    for (const auto& b : in) x.push_back(decode_buffer(read_as, b));
    std::vector<double> y;
    if (c.op == Op::kMatmul)
      y = matmul(c, x[0], x[1], flawed);
    else
      y = softmax(c, x[0], flawed);
    if (flaw_ == Flaw::kShortOutput && flawed && !y.empty()) y.pop_back();
    out.output = encode_buffer(c.dtype, y);
    return out;
  }

  std::optional<double> time_matmul(std::uint64_t, std::uint64_t, std::uint64_t, int) override {
    return seconds_per_matmul;
  }
  std::optional<double> seconds_per_matmul = 0.001;

 private:
  float acc_round(float v, DType t, bool flawed) const {
    if (flaw_ == Flaw::kAccumulateInDType && flawed) return static_cast<float>(round_to(t, v));
    return v;
  }
  std::vector<double> matmul(const Case& c, const std::vector<double>& a,
                             const std::vector<double>& b, bool flawed) const {
    const auto m = c.shape.m, n = c.shape.n, k = c.shape.k;
    std::vector<double> y(m * n);
    for (std::uint64_t i = 0; i < m; ++i)
      for (std::uint64_t j = 0; j < n; ++j) {
        float s = 0;
        for (std::uint64_t q = 0; q < k; ++q) {
          const std::uint64_t p = reverse_ ? k - 1 - q : q;
          s = acc_round(
              std::fma(static_cast<float>(a[i * k + p]), static_cast<float>(b[p * n + j]), s),
              c.dtype, flawed);
        }
        y[i * n + j] = s;
      }
    return y;
  }
  std::vector<double> softmax(const Case& c, const std::vector<double>& x, bool flawed) const {
    const auto rows = c.shape.m, cols = c.shape.n;
    std::vector<double> y(rows * cols);
    for (std::uint64_t r = 0; r < rows; ++r) {
      float mx = -INFINITY;
      for (std::uint64_t j = 0; j < cols; ++j)
        mx = std::max(mx, static_cast<float>(x[r * cols + j]));
      if (flaw_ == Flaw::kNoMaxSubtraction && flawed) mx = 0;
      float sum = 0;
      std::vector<float> e(cols);
      for (std::uint64_t j = 0; j < cols; ++j) {
        e[j] = std::exp(static_cast<float>(x[r * cols + j]) - mx);
        sum += e[j];
      }
      for (std::uint64_t j = 0; j < cols; ++j) y[r * cols + j] = e[j] / sum;
    }
    return y;
  }

  BackendInfo info_;
  Flaw flaw_;
  DType flawed_;
  bool reverse_;
};

}  // namespace fake
