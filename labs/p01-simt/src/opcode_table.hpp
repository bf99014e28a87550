// One row per opcode: its mnemonic and operand signature. The assembler
// parses by it and `mnemonic()` prints by it, so the two cannot disagree.
#pragma once

#include <array>
#include <optional>
#include <string_view>

#include "simt/isa.hpp"

namespace simt {

// Operand kinds in a signature: R register, B register or immediate,
// I immediate, L label.
struct OpcodeInfo {
  Opcode op;
  std::string_view name;
  std::string_view signature;  // e.g. "RRB"
  std::string_view usage;      // for "expects N operands (...)"
};

inline constexpr std::array<OpcodeInfo, 15> kOpcodeTable{{
    {Opcode::kTid, "TID", "R", "rd"},
    {Opcode::kLi, "LI", "RI", "rd, imm"},
    {Opcode::kAdd, "ADD", "RRB", "rd, ra, rb|imm"},
    {Opcode::kSub, "SUB", "RRB", "rd, ra, rb|imm"},
    {Opcode::kMul, "MUL", "RRB", "rd, ra, rb|imm"},
    {Opcode::kMod, "MOD", "RRB", "rd, ra, rb|imm"},
    {Opcode::kSeq, "SEQ", "RRB", "rd, ra, rb|imm"},
    {Opcode::kSlt, "SLT", "RRB", "rd, ra, rb|imm"},
    {Opcode::kBrz, "BRZ", "RLL", "ra, TARGET, JOIN"},
    {Opcode::kJmp, "JMP", "L", "TARGET"},
    {Opcode::kReconv, "RECONV", "", "no operands"},
    {Opcode::kLd, "LD", "RR", "rd, ra"},
    {Opcode::kSt, "ST", "RR", "ra, rb"},
    {Opcode::kVoteAny, "VOTE_ANY", "RR", "rd, ra"},
    {Opcode::kSelp, "SELP", "RRRR", "rd, ra, rb, rp"},
}};

inline const OpcodeInfo& opcode_info(Opcode op) { return kOpcodeTable[static_cast<std::size_t>(op)]; }

inline std::optional<OpcodeInfo> find_opcode(std::string_view upper_name) {
  for (const auto& info : kOpcodeTable)
    if (info.name == upper_name) return info;
  return std::nullopt;
}

}  // namespace simt
