#include "ptx_dissect/findings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <gpulab/cli.hpp>
#include <sstream>

#include "ptx_dissect/fatbin.hpp"
#include "ptx_dissect/ptx_text.hpp"
#include "ptx_dissect/ptxas_report.hpp"

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

namespace {

std::string find_tool(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "";
  dirs += ":/usr/local/cuda/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    auto end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::filesystem::path candidate =
        std::filesystem::path(dirs.substr(start, end - start)) / name;
    std::error_code ec;
    if (!candidate.parent_path().empty() && std::filesystem::is_regular_file(candidate, ec))
      return candidate.string();
    start = end + 1;
  }
  return "";
}

std::string capture(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  std::array<char, 4096> buf{};
  std::size_t got = 0;
  while ((got = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), got);
  pclose(p);
  return out;
}

// The SASS of one function from a cuobjdump --dump-sass listing.
std::string sass_of(const std::string& dump, const std::string& fn) {
  const auto start = dump.find("Function : " + fn + "\n");
  if (start == std::string::npos) return "";
  const auto end = dump.find("Function : ", start + 1);
  return dump.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

std::size_t occurrences(const std::string& s, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = s.find(needle); p != std::string::npos; p = s.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace

std::vector<Finding> check_sass(const std::filesystem::path& artifacts) {
  const std::string tool = find_tool("cuobjdump");
  const std::vector<std::pair<std::string, std::string>> checks = {
      {"saxpy", "FFMA in SASS"},
      {"guarded", "predicated instruction or SEL in SASS"},
      {"spiller", "LDL/STL spills in SASS"}};
  std::vector<Finding> f;
  if (tool.empty()) {
    for (const auto& [k, c] : checks)
      f.push_back({k, c, "cuobjdump not found (install the CUDA Toolkit)", Status::kSkip});
    return f;
  }
  const std::string dump =
      capture(tool + " --dump-sass " + (artifacts / "kernels.cubin").string() + " 2>&1");
  const std::string dump16 =
      capture(tool + " --dump-sass " + (artifacts / "kernels-maxrreg16.cubin").string() + " 2>&1");
  const auto saxpy = sass_of(dump, "saxpy");
  f.push_back({"saxpy", checks[0].second, fmt::format("{} FFMA", occurrences(saxpy, "FFMA")),
               verdict(occurrences(saxpy, "FFMA") > 0)});
  const auto guarded = sass_of(dump, "guarded");
  const auto pred = occurrences(guarded, "@P") + occurrences(guarded, "@!P");
  const auto sel = occurrences(guarded, "FSEL") + occurrences(guarded, " SEL");
  f.push_back({"guarded", checks[1].second, fmt::format("{} predicated, {} select", pred, sel),
               verdict(pred + sel > 0)});
  const auto spiller = sass_of(dump16, "spiller");
  const auto stl = occurrences(spiller, "STL");
  const auto ldl = occurrences(spiller, "LDL");
  f.push_back({"spiller", checks[2].second, fmt::format("{} STL, {} LDL", stl, ldl),
               verdict(stl > 0 && ldl > 0)});
  return f;
}

std::vector<Finding> run_all_checks(const std::filesystem::path& artifacts) {
  if (!std::filesystem::exists(artifacts / "kernels.ptx"))
    throw gpulab::Unsupported(
        fmt::format("no nvcc artifacts in {} (nvcc was not found when the lab was built; install "
                    "the CUDA Toolkit)",
                    artifacts.string()));
  std::vector<Finding> all =
      check_ptx(read_text(artifacts / "kernels.ptx"), read_text(artifacts / "kernels-nofma.ptx"));
  for (auto& x : check_ptxas(read_text(artifacts / "ptxas-v.txt"),
                             read_text(artifacts / "ptxas-maxrreg16.txt")))
    all.push_back(std::move(x));
  const std::string fat = read_text(artifacts / "fat.fatbin");
  for (auto& x : check_fatbin(std::vector<std::uint8_t>(fat.begin(), fat.end())))
    all.push_back(std::move(x));
  for (auto& x : check_sass(artifacts)) all.push_back(std::move(x));
  return all;
}

}  // namespace ptx_dissect
