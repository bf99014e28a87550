// A parsed PTX module: what the interpreter executes. The parser reads PTX
// text as nvcc and ptxc write it (directives, .param lists, .reg declarations,
// labels, // and /* */ comments, @%p / @!%p guards) and decodes each
// instruction once, so a typo or an instruction outside the supported subset
// is a parse error with a line number, not a surprise at run time.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ptxc::ptx {

// Malformed or unsupported PTX; what() starts with "line N: ".
struct ParseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class Opcode : std::uint8_t {
  kLdParam,
  kLdGlobal,
  kStGlobal,
  kCvtaToGlobal,
  kMov,
  kCvt,
  kAdd,
  kSub,
  kMul,
  kMulLo,
  kMulWide,
  kMad,
  kDiv,
  kFma,
  kNeg,
  kAbs,
  kSqrt,
  kMin,
  kMax,
  kShl,
  kSetp,
  kSelp,
  kBra,
  kRet,
};

enum class DType : std::uint8_t { kS32, kU32, kB32, kS64, kU64, kB64, kF32, kPred };
enum class Cmp : std::uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };
enum class Special : std::uint8_t { kTid, kNtid, kCtaid, kNctaid };

struct Operand {
  enum class Kind : std::uint8_t { kReg, kSpecial, kImmInt, kImmF32, kMem, kLabel, kParam };
  Kind kind = Kind::kReg;
  int reg = -1;          // kReg, kMem (base register; -1 with kParam base)
  std::int64_t imm = 0;  // kImmInt; kMem: byte offset
  float fimm = 0.0F;     // kImmF32
  Special special = Special::kTid;
  int dim = 0;     // kSpecial: 0 = .x, 1 = .y, 2 = .z
  int index = -1;  // kLabel: instruction index; kParam (and kMem of a param): param index
};

struct Instruction {
  Opcode op = Opcode::kRet;
  DType type = DType::kB32;      // the instruction's (last) type suffix
  DType src_type = DType::kB32;  // cvt: the source type
  Cmp cmp = Cmp::kEq;            // setp
  int guard = -1;                // predicate register, -1 = unguarded
  bool guard_negated = false;
  std::vector<Operand> ops;  // destination first, as written
  int line = 0;
  std::string opcode_text;  // "fma.rn.f32", for messages and counts
};

struct ParamDecl {
  std::string name;
  DType type = DType::kU32;
};

struct Entry {
  std::string name;
  std::vector<ParamDecl> params;
  std::vector<Instruction> body;
  std::vector<std::string> registers;  // slot -> name ("%f3"), every declared register
  int line = 0;
};

struct Module {
  std::string version;
  std::string target;
  int address_size = 0;
  std::vector<Entry> entries;

  [[nodiscard]] const Entry* find(std::string_view name) const;
};

Module parse_ptx(std::string_view text);

// The static instruction count of an entry (what nvcc vs ptxc compare).
inline std::size_t instruction_count(const Entry& e) {
  return e.body.size();
}

}  // namespace ptxc::ptx
