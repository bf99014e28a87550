#include "ptx_dissect/findings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <gpulab/errors.hpp>
#include <sstream>

#include "ptx_dissect/fatbin.hpp"
#include "ptx_dissect/ptx_text.hpp"
#include "ptx_dissect/ptxas_report.hpp"
#include "ptx_dissect/sass_text.hpp"
#include "ptx_dissect/tool_run.hpp"

namespace ptx_dissect {

std::string_view status_name(Finding::Status s) {
  switch (s) {
    case Finding::Status::kPass:
      return "PASS";
    case Finding::Status::kFail:
      return "FAIL";
    case Finding::Status::kSkip:
      return "SKIP";
  }
  return "?";
}

namespace {

using Status = Finding::Status;

Status verdict(bool ok) {
  return ok ? Status::kPass : Status::kFail;
}

std::size_t count(const std::vector<PtxLine>& body, std::string_view opcode_prefix) {
  std::size_t n = 0;
  for (const auto& l : body) n += l.opcode.rfind(opcode_prefix, 0) == 0;
  return n;
}

bool any_text(const std::vector<PtxLine>& body, std::string_view opcode_prefix,
              std::string_view part) {
  for (const auto& l : body)
    if (l.opcode.rfind(opcode_prefix, 0) == 0 && l.text.find(part) != std::string::npos)
      return true;
  return false;
}

std::vector<PtxLine> body_or_empty(const std::string& ptx, std::string_view name) {
  auto b = entry_body(ptx, name);
  return b ? *b : std::vector<PtxLine>{};
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw gpulab::RunError(fmt::format("cannot read {}", p.string()));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::vector<Finding> check_ptx(const std::string& ptx, const std::string& ptx_nofma) {
  std::vector<Finding> f;
  const auto saxpy = body_or_empty(ptx, "saxpy");
  // The six idioms of the annotation rubric.
  const auto params = count(saxpy, "ld.param");
  f.push_back({"saxpy", ".param ABI + ld.param prologue",
               fmt::format("{} ld.param for 4 arguments", params), verdict(params == 4)});
  const auto cvta = count(saxpy, "cvta.to.global");
  f.push_back({"saxpy", "cvta.to.global (generic -> global)",
               fmt::format("{} cvta.to.global.u64", cvta), verdict(cvta == 2)});
  const bool index = any_text(saxpy, "mov.u32", "%ctaid.x") &&
                     any_text(saxpy, "mov.u32", "%ntid.x") &&
                     any_text(saxpy, "mov.u32", "%tid.x") && count(saxpy, "mad.lo.s32") == 1;
  f.push_back({"saxpy", "mad.lo.s32 from %ctaid.x, %ntid.x, %tid.x",
               index ? "3 special registers, 1 mad.lo.s32" : "index idiom not found",
               verdict(index)});
  bool guard = false;
  for (std::size_t k = 0; k + 1 < saxpy.size(); ++k)
    guard = guard || (saxpy[k].opcode == "setp.ge.s32" && saxpy[k + 1].opcode == "bra" &&
                      !saxpy[k + 1].guard.empty());
  f.push_back({"saxpy", "setp.ge.s32 + @%p bra tail guard",
               guard ? "setp.ge.s32 then a predicated bra" : "not found", verdict(guard)});
  const auto wide = count(saxpy, "mul.wide.s32");
  f.push_back({"saxpy", "mul.wide.s32 byte offset (x4), once",
               fmt::format("{} mul.wide.s32 ..., 4", wide),
               verdict(wide == 1 && any_text(saxpy, "mul.wide.s32", ", 4"))});
  const auto fma = count(saxpy, "fma.rn.f32");
  f.push_back({"saxpy", "a*x+y contracted to fma.rn.f32", fmt::format("{} fma.rn.f32", fma),
               verdict(fma == 1)});
  const auto nofma = body_or_empty(ptx_nofma, "saxpy");
  const auto f2 = count(nofma, "fma.rn.f32");
  const auto mul = count(nofma, "mul.rn.f32");
  const auto add = count(nofma, "add.rn.f32");
  f.push_back({"saxpy", "-fmad=false: separate mul.rn + add.rn",
               fmt::format("{} fma, {} mul.rn.f32, {} add.rn.f32", f2, mul, add),
               verdict(f2 == 0 && mul == 1 && add == 1)});

  // guarded: NVVM already if-converts the small body; a selp or a predicated
  // non-branch instruction replaces the branch.
  const auto guarded = body_or_empty(ptx, "guarded");
  std::size_t predicated = 0;
  for (const auto& l : guarded) predicated += !l.guard.empty() && l.opcode != "bra";
  const auto selp = count(guarded, "selp");
  f.push_back({"guarded", "if body without a branch (selp / @%p)",
               fmt::format("{} selp, {} predicated non-branch, {} bra", selp, predicated,
                           count(guarded, "bra")),
               verdict(selp + predicated > 0 && count(guarded, "bra") == 1)});

  // unrolled: the loop body (a load) appears 8 times plus the remainder loop's.
  const auto unrolled = count(body_or_empty(ptx, "unrolled"), "ld.global.f32");
  const auto rolled = count(body_or_empty(ptx, "rolled"), "ld.global.f32");
  f.push_back({"unrolled", "#pragma unroll 8 replicates the body",
               fmt::format("{} loads vs {} in the rolled loop", unrolled, rolled),
               verdict(rolled == 1 && unrolled >= 8)});
  return f;
}

std::vector<Finding> check_ptxas(const std::string& report_text, const std::string& maxrreg_text) {
  std::vector<Finding> f;
  const auto report = parse_ptxas_report(report_text);
  const auto limited = parse_ptxas_report(maxrreg_text);
  const auto get = [](const PtxasReport& r, const char* name) {
    const auto it = r.functions.find(name);
    return it == r.functions.end() ? FunctionResources{} : it->second;
  };
  const auto u = get(report, "unrolled");
  const auto r = get(report, "rolled");
  f.push_back({"unrolled", "registers change with unrolling (ptxas -v)",
               fmt::format("{} registers unrolled, {} rolled", u.registers, r.registers),
               verdict(u.registers > 0 && r.registers > 0 && u.registers != r.registers)});
  const auto s = get(report, "spiller");
  f.push_back({"spiller", "register-resident without a limit",
               fmt::format("{} registers, {} bytes spill stores", s.registers, s.spill_store_bytes),
               verdict(s.registers > 0 && s.spill_store_bytes == 0)});
  if (limited.clamp) {
    f.push_back({"spiller", "-maxrregcount=16 clamped on sm_80",
                 fmt::format("{} -> {} registers on {}", limited.clamp->requested,
                             limited.clamp->applied, limited.clamp->arch),
                 Status::kPass});
  } else {
    f.push_back({"spiller", "-maxrregcount=16 clamped on sm_80", "no clamp warning (older ptxas?)",
                 Status::kSkip});
  }
  const auto l = get(limited, "spiller");
  f.push_back({"spiller", "spills under -maxrregcount=16",
               fmt::format("{} registers, {} bytes spill stores, {} bytes spill loads", l.registers,
                           l.spill_store_bytes, l.spill_load_bytes),
               verdict(l.spill_store_bytes > 0 && l.spill_load_bytes > 0)});
  return f;
}

std::vector<Finding> check_fatbin(const std::vector<std::uint8_t>& bytes) {
  std::vector<Finding> f;
  const auto entries = parse_fatbin(bytes);
  std::vector<int> sass;
  std::vector<int> ptx;
  std::string listing;
  for (const auto& e : entries) {
    (e.kind == FatbinEntry::Kind::kElf ? sass : ptx).push_back(e.arch);
    listing += (listing.empty() ? "" : ", ") +
               fmt::format("{}_{}", e.kind == FatbinEntry::Kind::kElf ? "sm" : "compute", e.arch);
  }
  std::sort(sass.begin(), sass.end());
  f.push_back({"fatbin", "-gencode matrix: 2 ELFs + compute_90 PTX", listing,
               verdict(sass == std::vector<int>{80, 90} && ptx == std::vector<int>{90})});
  return f;
}

std::vector<Finding> check_wmma_ptx(const std::string& wmma_ptx) {
  const auto body = body_or_empty(wmma_ptx, "wmma16");
  const auto mma = count(body, "wmma.mma.sync");
  const bool shape = any_text(body, "wmma.mma.sync", ".m16n16k16");
  return {{"wmma16", "wmma::mma_sync -> wmma.mma.sync in PTX",
           fmt::format("{} wmma.mma.sync{}", mma, shape ? " (m16n16k16)" : ""),
           verdict(mma == 1 && shape)}};
}

namespace {

// Which cubins each SASS row reads, so a cuobjdump failure lands on those rows only.
enum Cubin : unsigned { kKernels = 1, kMaxrreg16 = 2, kWmma = 4 };

struct SassCheck {
  const char* kernel;
  const char* check;
  unsigned cubins;
};

const std::array<SassCheck, 5> kSassChecks = {{
    {"saxpy", "FFMA in SASS", kKernels},
    {"guarded", "if body predicated in SASS (no branch)", kKernels},
    {"unrolled", "unrolled bodies in SASS (LDG)", kKernels},
    {"spiller", "LDL/STL spills in SASS", kKernels | kMaxrreg16},
    {"wmma16", "HMMA (tensor core) in SASS", kWmma},
}};

// The rows that read any of the cubins in `mask` fail with `why` instead of their counts.
void fail_rows(std::vector<Finding>& f, unsigned mask, const std::string& why) {
  for (std::size_t k = 0; k < f.size() && k < kSassChecks.size(); ++k) {
    if ((kSassChecks[k].cubins & mask) == 0) continue;
    f[k].found = why;
    f[k].status = Status::kFail;
  }
}

// A listing that cannot be read counts as empty; `unreadable` remembers which and why.
std::vector<SassFunction> parse_or_empty(const std::string& dump, Cubin which, unsigned& unreadable,
                                         std::string& why) {
  try {
    return parse_sass_dump(dump);
  } catch (const std::runtime_error& e) {
    unreadable |= which;
    if (why.empty()) why = fmt::format("unreadable SASS listing: {}", e.what());
    return {};
  }
}

// A function's instructions, or none when the listing lacks it (the counts then
// come out 0 and the check fails instead of passing vacuously).
SassFunction function_or_empty(const std::vector<SassFunction>& fns, std::string_view name) {
  const auto* f = find_function(fns, name);
  return f != nullptr ? *f : SassFunction{};
}

}  // namespace

std::vector<Finding> check_sass_dumps(const SassDumps& dumps) {
  unsigned unreadable = 0;
  std::string why;
  const auto fns = parse_or_empty(dumps.kernels, kKernels, unreadable, why);
  const auto fns16 = parse_or_empty(dumps.maxrreg16, kMaxrreg16, unreadable, why);
  const auto fns_wmma = parse_or_empty(dumps.wmma, kWmma, unreadable, why);
  std::vector<Finding> f;

  const auto saxpy = function_or_empty(fns, "saxpy");
  const auto ffma = count_base(saxpy, "FFMA");
  const auto split = count_base(saxpy, "FMUL") + count_base(saxpy, "FADD");
  f.push_back({"saxpy", kSassChecks[0].check, fmt::format("{} FFMA, {} FMUL/FADD", ffma, split),
               verdict(ffma == 1 && split == 0)});

  // The tail guard is a predicated EXIT; the if body must be predicated (or a
  // select) with no branch left to jump over it.
  const auto guarded = function_or_empty(fns, "guarded");
  std::size_t predicated = 0;
  std::size_t branches = 0;
  std::string example;
  for (const auto& i : guarded.code) {
    if (i.base() == "BRA" && !is_padding_branch(i)) ++branches;
    if (i.guard.empty() || i.base() == "EXIT" || i.base() == "BRA") continue;
    ++predicated;
    if (example.empty()) example = fmt::format(" ({} {})", i.guard, i.opcode);
  }
  const auto sel = count_base(guarded, "SEL") + count_base(guarded, "FSEL");
  f.push_back(
      {"guarded", kSassChecks[1].check,
       fmt::format("{} predicated{}, {} SEL/FSEL, {} BRA", predicated, example, sel, branches),
       verdict(predicated + sel > 0 && branches == 0)});

  const auto unrolled = count_base(function_or_empty(fns, "unrolled"), "LDG");
  const auto rolled = count_base(function_or_empty(fns, "rolled"), "LDG");
  f.push_back({"unrolled", kSassChecks[2].check,
               fmt::format("{} LDG vs {} in the rolled loop", unrolled, rolled),
               verdict(rolled == 1 && unrolled >= 8)});

  const auto uncapped = function_or_empty(fns, "spiller");
  const auto capped = function_or_empty(fns16, "spiller");
  const auto stl = count_base(capped, "STL");
  const auto ldl = count_base(capped, "LDL");
  const auto free_local = count_base(uncapped, "STL") + count_base(uncapped, "LDL");
  f.push_back({"spiller", kSassChecks[3].check,
               fmt::format("{} STL, {} LDL capped; {} uncapped", stl, ldl, free_local),
               verdict(stl > 0 && ldl > 0 && free_local == 0 && !uncapped.code.empty())});

  const auto wmma = function_or_empty(fns_wmma, "wmma16");
  std::size_t hmma = 0;
  std::string shape;
  for (const auto& i : wmma.code) {
    if (i.base() != "HMMA") continue;
    ++hmma;
    shape = i.opcode;
  }
  f.push_back({"wmma16", kSassChecks[4].check,
               hmma == 0 ? std::string("0 HMMA") : fmt::format("{} {}", hmma, shape),
               verdict(hmma > 0)});
  fail_rows(f, unreadable, why);
  return f;
}

std::vector<Finding> check_sass(const std::filesystem::path& artifacts,
                                const std::string& cuobjdump) {
  std::error_code ec;
  if (cuobjdump.empty() || !std::filesystem::is_regular_file(cuobjdump, ec)) {
    const std::string why = cuobjdump.empty()
                                ? std::string("no cuobjdump (tools/lab build installs it)")
                                : fmt::format("no cuobjdump at {}", cuobjdump);
    std::vector<Finding> f;
    for (const auto& c : kSassChecks) f.push_back({c.kernel, c.check, why, Status::kSkip});
    return f;
  }
  // One listing per cubin. A tool failure leaves that listing empty and marks the
  // rows that read it, which then fail with the tool's own first line.
  unsigned failed = 0;
  std::string failure;
  const auto dump = [&](const char* cubin, Cubin which) {
    const auto run = run_tool({cuobjdump, "--dump-sass", (artifacts / cubin).string()});
    if (run.exit_code == 0) return run.output;
    failed |= which;
    if (failure.empty())
      failure = fmt::format("cuobjdump exit {} on {}: {}", run.exit_code, cubin,
                            run.output.substr(0, run.output.find('\n')));
    return std::string();
  };
  const SassDumps dumps{dump("kernels.cubin", kKernels),
                        dump("kernels-maxrreg16.cubin", kMaxrreg16), dump("wmma.cubin", kWmma)};
  auto f = check_sass_dumps(dumps);
  fail_rows(f, failed, failure);
  return f;
}

std::vector<Finding> run_all_checks(const std::filesystem::path& artifacts,
                                    const std::string& cuobjdump) {
  if (!std::filesystem::exists(artifacts / "kernels.ptx"))
    throw gpulab::Unsupported(
        fmt::format("no nvcc artifacts in {} (nvcc was not found when the lab was built; install "
                    "the CUDA Toolkit)",
                    artifacts.string()));
  std::vector<Finding> all =
      check_ptx(read_text(artifacts / "kernels.ptx"), read_text(artifacts / "kernels-nofma.ptx"));
  for (auto& x : check_wmma_ptx(read_text(artifacts / "wmma.ptx"))) all.push_back(std::move(x));
  for (auto& x : check_ptxas(read_text(artifacts / "ptxas-v.txt"),
                             read_text(artifacts / "ptxas-maxrreg16.txt")))
    all.push_back(std::move(x));
  const std::string fat = read_text(artifacts / "fat.fatbin");
  for (auto& x : check_fatbin(std::vector<std::uint8_t>(fat.begin(), fat.end())))
    all.push_back(std::move(x));
  for (auto& x : check_sass(artifacts, cuobjdump)) all.push_back(std::move(x));
  return all;
}

}  // namespace ptx_dissect
