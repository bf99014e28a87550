// Runs the matrix on every target and classifies the results:
//   PASS  declared, and every case of the capability is within tolerance
//   FAIL  declared, and a case is wrong, crashed into an error code, or came
//         back with the wrong size: "declared but wrong" — conformance's reason to exist
//   n/a   not declared (never called: declarations are what routing trusts)
//   skip  the backend loaded but cannot run on this machine (no device)
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "conformance/matrix.hpp"
#include "conformance/reference.hpp"
#include "conformance/target.hpp"
#include "conformance/tolerance.hpp"

namespace conformance {

enum class Verdict : std::uint8_t { kPass, kFail, kNotDeclared, kSkipped };
std::string_view name_of(Verdict v);  // "PASS", "FAIL", "n/a", "skip"

struct CaseResult {
  Case c;
  Verdict verdict = Verdict::kPass;
  std::string detail;  // FAIL: what was wrong; n/a / skip: why
  CheckResult check;
};

// One capability (op, dtype) of one backend: the cell of the matrix table.
struct CellResult {
  Op op = Op::kMatmul;
  DType dtype = DType::kF32;
  Verdict verdict = Verdict::kNotDeclared;
  int passed = 0;
  int total = 0;  // cases run (n/a and skip: 0)
};

struct BackendResult {
  BackendInfo info;
  std::vector<CaseResult> cases;
  std::vector<CellResult> cells;
  [[nodiscard]] bool available() const { return info.unavailable.empty(); }
  [[nodiscard]] int failed_capabilities() const;
  // Every declared capability passed (vacuously true for an unavailable backend).
  [[nodiscard]] bool conformant() const { return failed_capabilities() == 0; }
  [[nodiscard]] const CellResult* cell(Op op, DType t) const;
};

// The capabilities the matrix covers, in table order (buffer, then each op x dtype).
struct PreparedCase;
std::vector<std::pair<Op, DType>> capabilities_of(const std::vector<PreparedCase>& cases);

// A case with its inputs (as values and encoded for the backend) and its
// reference: computed once, shared by every backend.
struct PreparedCase {
  Case c;
  CaseData data;
  std::vector<std::vector<std::uint8_t>> encoded;
};
std::vector<PreparedCase> prepare(const std::vector<Case>& cases);

// Runs the prepared cases on one target. `on_case` (optional) sees each result.
BackendResult run_backend(Target& target, const std::vector<PreparedCase>& cases,
                          const std::function<void(const CaseResult&)>& on_case = {});

// Classifies one backend output against the case's reference.
CaseResult judge(const PreparedCase& p, const RunOutcome& outcome);

// "FAIL liar/F16/matmul 7x13x5: 91 of 91 elements outside tolerance; worst [3,2] got 1.5 expected
// 0.2749 (|err| 1.225 > bound 0.00049)"
std::string failure_line(std::string_view backend, const CaseResult& r);

}  // namespace conformance
