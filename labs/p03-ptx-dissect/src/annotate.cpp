#include "ptx_dissect/annotate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "ptx_dissect/ptx_text.hpp"

namespace ptx_dissect {

namespace {

bool starts(std::string_view s, std::string_view prefix) {
  return s.rfind(prefix, 0) == 0;
}
bool has(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

std::string explain_directive(std::string_view t) {
  if (starts(t, ".version")) return "PTX ISA version this text is written in";
  if (starts(t, ".target")) return "oldest GPU architecture this PTX may be compiled for";
  if (starts(t, ".address_size")) return "pointers are 64-bit";
  if (has(t, ".entry"))
    return "a __global__ kernel the driver can launch (.visible: exported by name)";
  if (starts(t, ".param")) return "a kernel argument, passed in the .param state space";
  if (starts(t, ".reg .pred")) return "predicate registers (1-bit), for setp/@%p";
  if (starts(t, ".reg")) return "virtual registers, unlimited in PTX; ptxas assigns the real ones";
  if (starts(t, ".shared")) return "per-block shared memory";
  if (starts(t, ".local")) return "per-thread local memory (stack, spills)";
  return "directive";
}

std::string explain_instruction(const PtxLine& l) {
  const std::string_view op = l.opcode;
  const std::string_view t = l.text;
  std::string what;
  if (starts(op, "ld.param"))
    what = "read a kernel argument from .param space (the ABI prologue)";
  else if (starts(op, "cvta.to.global"))
    what = "generic pointer -> .global address (the space ld/st.global need)";
  else if (starts(op, "mov") && has(t, "%ctaid.x"))
    what = "blockIdx.x";
  else if (starts(op, "mov") && has(t, "%ntid.x"))
    what = "blockDim.x";
  else if (starts(op, "mov") && has(t, "%tid.x"))
    what = "threadIdx.x";
  else if (starts(op, "mov") && has(t, "0f"))
    what = "materialise a float constant (IEEE-754 bits in hex)";
  else if (starts(op, "mov"))
    what = "copy";
  else if (starts(op, "mad.lo"))
    what = "i = blockIdx.x * blockDim.x + threadIdx.x (low 32 bits of a*b+c)";
  else if (starts(op, "setp"))
    what = fmt::format("predicate = ({} comparison){}", op.substr(5, op.find('.', 5) - 5),
                       starts(op, "setp.ge.s32") ? ": the tail test i >= n" : "");
  else if (starts(op, "bra"))
    what = "jump to the label";
  else if (starts(op, "mul.wide"))
    what = "byte offset = i * sizeof(float), widened to 64 bits";
  else if (starts(op, "add.s64") || starts(op, "add.u64"))
    what = "address = base + byte offset";
  else if (starts(op, "ld.global"))
    what = "load from global memory (DRAM, through L2/L1)";
  else if (starts(op, "st.global"))
    what = "store to global memory";
  else if (starts(op, "fma.rn.f32"))
    what = "a*b+c, rounded once: nvcc contracted a mul and an add (-fmad=false stops it)";
  else if (starts(op, "mul.rn.f32"))
    what = "multiply, rounded; .rn forbids fusing it into an FMA";
  else if (starts(op, "add.rn.f32"))
    what = "add, rounded; .rn forbids fusing it into an FMA";
  else if (starts(op, "mul.f32"))
    what = "multiply (no .rn: ptxas may still fuse it with an add)";
  else if (starts(op, "add.f32"))
    what = "add (no .rn: ptxas may still fuse it with a multiply)";
  else if (starts(op, "selp"))
    what = "select: d = p ? a : b, an if without a branch (if-conversion)";
  else if (starts(op, "rem"))
    what = "remainder (an integer division: expensive on GPUs)";
  else if (starts(op, "ret"))
    what = "the thread is done";
  else
    what = fmt::format("{} instruction", op.substr(0, op.find('.')));
  if (!l.guard.empty())
    what = fmt::format(
        "only where {} is {}: {}", l.guard.substr(l.guard[1] == '!' ? 2 : 1),
        l.guard[1] == '!' ? "false" : "true",
        starts(op, "bra") ? "threads past the end skip the body (the tail guard)" : what);
  return what;
}

}  // namespace

std::string explain_line(std::string_view raw) {
  std::string_view s = raw;
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  if (starts(s, "// .globl")) return "the next entry is a global symbol";
  if (starts(s, "//")) return "";
  const PtxLine l = classify_line(raw, 0);
  const std::string_view t = l.text;
  if (t.empty() || t == "{" || t == "}" || t == ")") return "";
  if (t.back() == ':') return "label: a branch target";
  if (t[0] == '.') return explain_directive(t);
  return explain_instruction(l);
}

std::string annotate(std::string_view ptx) {
  std::vector<std::pair<std::string, std::string>> rows;
  std::size_t start = 0;
  while (start < ptx.size()) {
    auto end = ptx.find('\n', start);
    if (end == std::string_view::npos) end = ptx.size();
    std::string line(ptx.substr(start, end - start));
    start = end + 1;
    std::replace(line.begin(), line.end(), '\t', ' ');
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    rows.emplace_back(line, explain_line(line));
  }
  std::size_t width = 0;
  for (const auto& [text, why] : rows)
    if (!why.empty()) width = std::max(width, text.size());
  std::string out;
  for (const auto& [text, why] : rows)
    out += why.empty() ? text + "\n" : fmt::format("{:<{}}  // {}\n", text, width, why);
  return out;
}

}  // namespace ptx_dissect
