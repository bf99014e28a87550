// The simulator's instruction set: a dozen warp instructions, enough to
// express branches, reconvergence, votes, predication and loads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace simt {

enum class Opcode : std::uint8_t {
  kTid,      // TID rd                 rd <- warp*32 + lane
  kLi,       // LI rd, imm             rd <- imm
  kAdd,      // ADD rd, ra, rb|imm
  kSub,      // SUB rd, ra, rb|imm
  kMul,      // MUL rd, ra, rb|imm
  kMod,      // MOD rd, ra, rb|imm     C remainder: the sign follows ra
  kSeq,      // SEQ rd, ra, rb|imm     rd <- (ra == b)
  kSlt,      // SLT rd, ra, rb|imm     rd <- (ra < b)
  kBrz,      // BRZ ra, TARGET, JOIN   lanes with ra == 0 go to TARGET; JOIN is the RECONV
  kJmp,      // JMP TARGET
  kReconv,   // RECONV                 the reconvergence point named by a BRZ
  kLd,       // LD rd, ra              rd <- mem[ra]
  kSt,       // ST ra, rb              mem[ra] <- rb
  kVoteAny,  // VOTE_ANY rd, ra        rd <- any active lane has ra != 0
  kSelp,     // SELP rd, ra, rb, rp    rd <- rp != 0 ? ra : rb
};

inline constexpr int kNumRegisters = 16;

struct Instruction {
  Opcode op = Opcode::kReconv;
  std::uint8_t rd = 0, ra = 0, rb = 0, rp = 0;
  bool b_is_imm = false;     // ALU ops: the last source is `imm` instead of `rb`
  std::int64_t imm = 0;      // LI value or the ALU immediate
  std::uint32_t target = 0;  // BRZ / JMP destination (an instruction index)
  std::uint32_t join = 0;    // BRZ reconvergence point (index of a RECONV)
  int line = 0;              // 1-based source line, for diagnostics
  std::string text;          // the source text, for --trace
};

// The executor's form of `code` (src/decode.hpp), built once when the program
// is assembled: a run of a short kernel would otherwise spend a tenth of its
// time decoding. Shared, so copies of a Program share it too.
struct DecodedCode;

struct Program {
  std::string name;  // file name, for diagnostics
  std::vector<Instruction> code;
  // Set by assemble(); a Program built by hand (or whose `code` was edited
  // afterwards) leaves it empty or resets it, and run() then decodes `code` itself.
  std::shared_ptr<const DecodedCode> decoded;
};

std::string_view mnemonic(Opcode op);

}  // namespace simt
