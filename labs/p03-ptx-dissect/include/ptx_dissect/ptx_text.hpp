// Just enough PTX reading for the dissection: the instruction lines of one
// .entry, comments and blank lines dropped. (The full parser and interpreter
// live in p03-ptxc; this lab only needs to find idioms in nvcc's text.)
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptx_dissect {

struct PtxLine {
  int number = 0;      // 1-based line in the file
  std::string text;    // trimmed, comment removed, no trailing ';'
  std::string opcode;  // "fma.rn.f32" ("" for labels and directives)
  std::string guard;   // "@%p1" or "@!%p1", if predicated
};

// The body of `.entry name(...)`, or nullopt if there is no such entry.
std::optional<std::vector<PtxLine>> entry_body(std::string_view ptx, std::string_view name);

// The parameter declarations of `.entry name(...)` (".param .f32 saxpy_param_0"),
// or nullopt if there is no such entry. They are the kernel's ABI.
std::optional<std::vector<std::string>> entry_params(std::string_view ptx, std::string_view name);

// The value of a header directive (".version" -> "9.0"), or "" if absent.
std::string header_directive(std::string_view ptx, std::string_view directive);

// The names of every .entry in the file, in order.
std::vector<std::string> entry_names(std::string_view ptx);

// Splits one raw line into guard / opcode / text (used by the annotator too).
PtxLine classify_line(std::string_view raw, int number);

}  // namespace ptx_dissect
