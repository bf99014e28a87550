// Instructions as the executor runs them (internal to the library): decoded
// once per run, so an issue reads one 24-byte record instead of the
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
};

struct DecodedOp {
  Kind kind = Kind::kReconv;
  std::uint8_t rd = 0, ra = 0, rb = 0, rp = 0;
  std::uint32_t target = 0;  // BRZ / JMP destination
  std::uint32_t join = 0;    // BRZ reconvergence point
  std::int64_t imm = 0;      // LI value or the ALU immediate
};

struct DecodedCode {
  std::vector<DecodedOp> ops;
};

std::vector<DecodedOp> decode(const Program& program);

}  // namespace simt
