#include "decode.hpp"

#include <array>

namespace simt {

namespace {

// Indexed by opcode, then by "the last source is an immediate".
constexpr std::array<std::array<Kind, 2>, 15> kKinds{{
    {Kind::kTid, Kind::kTid},
    {Kind::kLi, Kind::kLi},
    {Kind::kAddR, Kind::kAddI},
    {Kind::kSubR, Kind::kSubI},
    {Kind::kMulR, Kind::kMulI},
    {Kind::kModR, Kind::kModI},
    {Kind::kSeqR, Kind::kSeqI},
    {Kind::kSltR, Kind::kSltI},
    {Kind::kBrz, Kind::kBrz},
    {Kind::kJmp, Kind::kJmp},
    {Kind::kReconv, Kind::kReconv},
    {Kind::kLd, Kind::kLd},
    {Kind::kSt, Kind::kSt},
    {Kind::kVoteAny, Kind::kVoteAny},
    {Kind::kSelp, Kind::kSelp},
}};
static_assert(static_cast<std::size_t>(Opcode::kSelp) + 1 == kKinds.size(), "one row per opcode");

}  // namespace

std::vector<DecodedOp> decode(const Program& program) {
  std::vector<DecodedOp> out(program.code.size() + 1);
  out.back().kind = Kind::kEnd;
  out.back().pc = static_cast<std::uint32_t>(program.code.size());
  for (std::size_t i = 0; i < program.code.size(); ++i) {
    const Instruction& ins = program.code[i];
    out[i] = {kKinds[static_cast<std::size_t>(ins.op)][ins.b_is_imm ? 1 : 0],
              ins.rd,
              ins.ra,
              ins.rb,
              ins.rp,
              ins.target,
              ins.join,
              ins.imm,
              static_cast<std::uint32_t>(i)};
  }
  return out;
}

}  // namespace simt
