// Instructions as the executor runs them (internal to the library): decoded
// once per program, so an issue reads one 32-byte record instead of the
// assembler's Instruction (which carries its source text), and the
// register-or-immediate choice of an ALU op is part of the opcode, so the
// 32-lane loops carry no branch on it.
#pragma once

#include <cstdint>
#include <vector>

#include "simt/isa.hpp"

namespace simt {

enum class Kind : std::uint8_t {
  kTid,
  kLi,
  kAddR,
  kAddI,
  kSubR,
  kSubI,
  kMulR,
  kMulI,
  kModR,
  kModI,
  kSeqR,
  kSeqI,
  kSltR,
  kSltI,
  kBrz,
  kJmp,
  kReconv,
  kLd,
  kSt,
  kVoteAny,
  kSelp,
  kEnd,  // after the last instruction: the warp has finished (issues nothing)
};

struct DecodedOp {
  Kind kind = Kind::kReconv;
  std::uint8_t rd = 0, ra = 0, rb = 0, rp = 0;
  std::uint32_t target = 0;  // BRZ / JMP destination
  std::uint32_t join = 0;    // BRZ reconvergence point
  std::int64_t imm = 0;      // LI value or the ALU immediate
  std::uint32_t pc = 0;      // its own index: the issue loop walks records by pointer
};

struct DecodedCode {
  std::vector<DecodedOp> ops;
};

// One record per instruction and a final Kind::kEnd, so the issue loop finds
// the end of the program without comparing the PC with its length.
std::vector<DecodedOp> decode(const Program& program);

}  // namespace simt
