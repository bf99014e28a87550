// The seam between the harness and what it tests: one backend, as the harness
// sees it. The program adapts every backend the HAL loaded (hal_target.hpp);
// the unit tests use small in-process fakes (an honest one, a liar), so the
// harness's own logic is tested without any .so file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "conformance/matrix.hpp"

namespace conformance {

struct BackendInfo {
  std::string name;
  std::string abi;     // "2.2"
  std::string device;  // what describe_device() said, or "" when not reported
  std::uint32_t perf_hint = 0;
  std::vector<Op> ops;  // declared
  std::vector<DType> dtypes;
  std::uint64_t max_dim = 0;  // 0 = no limit
  std::string unavailable;    // non-empty: loaded but cannot run here ("no device: ...")

  [[nodiscard]] bool declares(Op op) const;
  [[nodiscard]] bool declares(Op op, DType t) const;  // buffer ops ignore the dtype
};

struct RunOutcome {
  bool ok = true;
  std::string error;                 // what the backend said when !ok
  std::vector<std::uint8_t> output;  // matmul: C; softmax: out; buffer: the bytes read back
};

class Target {
 public:
  virtual ~Target() = default;
  [[nodiscard]] virtual const BackendInfo& info() const = 0;
  // Runs one case on encoded inputs (dtype storage layout, see dtype.hpp).
  virtual RunOutcome run(const Case& c, const std::vector<std::vector<std::uint8_t>>& inputs) = 0;
  // Seconds of one F32 matmul of m x n x k with the buffers already on the
  // device: the minimum of `reps` runs after one warm-up. nullopt if it failed.
  virtual std::optional<double> time_matmul(std::uint64_t m, std::uint64_t n, std::uint64_t k,
                                            int reps) = 0;
};

}  // namespace conformance
