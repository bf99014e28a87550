// Reads what `cuobjdump --dump-sass` prints: per function, the SASS
// instructions with their address, predicate guard, opcode and operands.
// Instruction lines look like
//         /*00c0*/              @!P0 FMUL R7, R7, -0.5 ;      /* 0xbf00000007078820 */
// and are followed by a line holding only the second half of the encoding.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ptx_dissect {

struct SassInstruction {
  std::uint64_t address = 0;
  std::string guard;     // "@P0", "@!P0" or "" when not predicated
  std::string opcode;    // "IMAD.WIDE", "FFMA"
  std::string operands;  // "R2, R4, R5, c[0x0][0x168]"

  // The opcode without its modifiers: "IMAD" for "IMAD.WIDE", "HMMA" for "HMMA.16816.F32".
  std::string_view base() const;
};

struct SassFunction {
  std::string name;  // "saxpy"
  std::string arch;  // "sm_80", from the "code for sm_80" line above it
  std::vector<SassInstruction> code;
};

// Every function in the listing, in order. Throws std::runtime_error naming the
// line when an instruction appears before any "Function :" header.
std::vector<SassFunction> parse_sass_dump(std::string_view dump);

// The first function with that name, or nullptr.
const SassFunction* find_function(const std::vector<SassFunction>& fns, std::string_view name);

// How many instructions of the function have this base opcode ("LDG", "STL").
std::size_t count_base(const SassFunction& fn, std::string_view base);

// A branch to its own address: the `BRA self` that pads every function after its
// last EXIT. It is never taken, so checks about branches leave it out.
bool is_padding_branch(const SassInstruction& insn);

}  // namespace ptx_dissect
