#include "conformance/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <cmath>

namespace conformance {

std::string_view name_of(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "PASS";
    case Verdict::kFail:
      return "FAIL";
    case Verdict::kNotDeclared:
      return "n/a";
    case Verdict::kSkipped:
      return "skip";
  }
  return "?";
}

bool BackendInfo::declares(Op op) const {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

bool BackendInfo::declares(Op op, DType t) const {
  if (!declares(op)) return false;
  return !op_has_dtype(op) || std::find(dtypes.begin(), dtypes.end(), t) != dtypes.end();
}

int BackendResult::failed_capabilities() const {
  return static_cast<int>(std::count_if(
      cells.begin(), cells.end(), [](const CellResult& c) { return c.verdict == Verdict::kFail; }));
}

const CellResult* BackendResult::cell(Op op, DType t) const {
  for (const auto& c : cells)
    if (c.op == op && (!op_has_dtype(op) || c.dtype == t)) return &c;
  return nullptr;
}

std::vector<std::pair<Op, DType>> capabilities_of(const std::vector<PreparedCase>& cases) {
  std::vector<std::pair<Op, DType>> caps;
  for (const auto& p : cases) {
    const std::pair<Op, DType> cap{p.c.op, op_has_dtype(p.c.op) ? p.c.dtype : DType::kF32};
    if (std::find(caps.begin(), caps.end(), cap) == caps.end()) caps.push_back(cap);
  }
  return caps;
}

std::vector<PreparedCase> prepare(const std::vector<Case>& cases) {
  std::vector<PreparedCase> out;
  out.reserve(cases.size());
  for (const Case& c : cases) {
    PreparedCase p{c, make_case_data(c), {}};
    for (std::size_t i = 0; i < p.data.inputs.size(); ++i) {
      const auto& in = p.data.inputs[i];
      const InputKind kind = i < p.data.kinds.size() ? p.data.kinds[i] : InputKind::kDType;
      if (kind == InputKind::kInt32) {
        std::vector<std::uint8_t> bytes(in.size() * 4);
        for (std::size_t j = 0; j < in.size(); ++j) {
          const auto v = static_cast<std::int32_t>(in[j]);
          std::memcpy(bytes.data() + j * 4, &v, 4);
        }
        p.encoded.push_back(std::move(bytes));
      } else if (kind == InputKind::kF32) {
        p.encoded.push_back(encode_buffer(DType::kF32, in));
      } else if (c.op == Op::kBuffer) {
        std::vector<std::uint8_t> bytes(in.size());
        std::transform(in.begin(), in.end(), bytes.begin(),
                       [](double v) { return static_cast<std::uint8_t>(v); });
        p.encoded.push_back(std::move(bytes));
      } else {
        p.encoded.push_back(encode_buffer(c.dtype, in));
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

CaseResult judge(const PreparedCase& p, const RunOutcome& outcome) {
  CaseResult r{p.c, Verdict::kPass, {}, {}};
  if (!outcome.ok) {
    r.verdict = Verdict::kFail;
    r.detail = fmt::format("declared but the call failed: {}", outcome.error);
    return r;
  }
  std::vector<double> got;
  if (p.c.op == Op::kBuffer) {
    got.assign(outcome.output.begin(), outcome.output.end());
  } else {
    const std::size_t want_bytes =
        p.data.exact.size() * static_cast<std::size_t>(format_of(p.c.dtype).bytes);
    if (outcome.output.size() != want_bytes) {
      r.verdict = Verdict::kFail;
      r.detail = fmt::format("output has {} bytes, expected {}", outcome.output.size(), want_bytes);
      return r;
    }
    got = decode_buffer(p.c.dtype, outcome.output);
  }
  if (got.size() != p.data.exact.size()) {
    r.verdict = Verdict::kFail;
    r.detail = fmt::format("output has {} elements, expected {}", got.size(), p.data.exact.size());
    return r;
  }
  r.check = check_elements(p.c.op == Op::kBuffer ? DType::kF32 : p.c.dtype, got, p.data.exact,
                           p.data.bound);
  if (!r.check.pass()) {
    r.verdict = Verdict::kFail;
    const Mismatch& w = *r.check.worst;
    std::string where = fmt::format("[{}]", w.index);
    const bool rows_of_n = p.c.op == Op::kMatmul || p.c.op == Op::kSoftmax || p.c.op == Op::kRmsNorm ||
                           p.c.op == Op::kSiluMul;
    if (rows_of_n && p.c.shape.n > 0)
      where = fmt::format("[{},{}]", w.index / p.c.shape.n, w.index % p.c.shape.n);
    if (p.c.op == Op::kBuffer) {
      r.detail = fmt::format("{} of {} bytes differ; first at {} got 0x{:02x} expected 0x{:02x}",
                             r.check.bad, r.check.elements, where, static_cast<unsigned>(w.got),
                             static_cast<unsigned>(w.expected));
    } else {
      r.detail = fmt::format(
          "{} of {} elements outside tolerance; worst {} got {:.6g} expected {:.6g} "
          "(|err| {:.3g} > bound {:.3g})",
          r.check.bad, r.check.elements, where, w.got, w.expected, std::fabs(w.got - w.expected),
          w.bound);
    }
  }
  return r;
}

BackendResult run_backend(Target& target, const std::vector<PreparedCase>& cases,
                          const std::function<void(const CaseResult&)>& on_case) {
  BackendResult br;
  br.info = target.info();
  for (const auto& cap : capabilities_of(cases)) {
    CellResult cell;
    cell.op = cap.first;
    cell.dtype = cap.second;
    if (!br.available())
      cell.verdict = Verdict::kSkipped;
    else
      cell.verdict =
          br.info.declares(cap.first, cap.second) ? Verdict::kPass : Verdict::kNotDeclared;
    br.cells.push_back(cell);
  }
  for (const auto& p : cases) {
    CaseResult r{p.c, Verdict::kPass, {}, {}};
    if (!br.available()) {
      r.verdict = Verdict::kSkipped;
      r.detail = br.info.unavailable;
    } else if (!br.info.declares(p.c.op, p.c.dtype)) {
      r.verdict = Verdict::kNotDeclared;
      r.detail = "not declared";
    } else if (br.info.max_dim != 0 && largest_dim(p.c) > br.info.max_dim) {
      r.verdict = Verdict::kNotDeclared;
      r.detail = fmt::format("beyond the declared max_dim {}", br.info.max_dim);
    } else {
      r = judge(p, target.run(p.c, p.encoded));
    }
    CellResult* cell = nullptr;
    for (auto& c : br.cells)
      if (c.op == p.c.op && (!op_has_dtype(p.c.op) || c.dtype == p.c.dtype)) cell = &c;
    if (cell && (r.verdict == Verdict::kPass || r.verdict == Verdict::kFail)) {
      ++cell->total;
      if (r.verdict == Verdict::kPass)
        ++cell->passed;
      else
        cell->verdict = Verdict::kFail;
    }
    if (on_case) on_case(r);
    br.cases.push_back(std::move(r));
  }
  return br;
}

std::string failure_line(std::string_view backend, const CaseResult& r) {
  return fmt::format("FAIL {} {}: {}", capability_id(backend, r.c.op, r.c.dtype),
                     label(r.c.op, r.c.shape), r.detail);
}

}  // namespace conformance
