#include "simt/assembler.hpp"

#include <gtest/gtest.h>

#include "simt/kernels.hpp"

using simt::assemble;
using simt::AssemblyError;
using simt::Opcode;

namespace {

// The diagnostic the assembler gives for `source`, or "" if it assembles.
std::string error_of(const std::string& source) {
  try {
    assemble(source, "t.simt");
    return "";
  } catch (const AssemblyError& e) {
    return e.what();
  }
}

}  // namespace

TEST(Assembler, EncodesOperandsLabelsAndComments) {
  const auto p = assemble(
      "start:  TID r0        ; lane id\n"
      "        ADD r1, r0, -7\n"
      "        add r2, r1, r0\n"
      "        BRZ r2, out, join\n"
      "join:   RECONV\n"
      "        ST r0, r2\n"
      "out:\n",
      "t.simt");
  ASSERT_EQ(p.code.size(), 6u);
  EXPECT_EQ(p.code[0].op, Opcode::kTid);
  EXPECT_TRUE(p.code[1].b_is_imm);
  EXPECT_EQ(p.code[1].imm, -7);
  EXPECT_EQ(p.code[2].op, Opcode::kAdd);  // mnemonics are case-insensitive
  EXPECT_FALSE(p.code[2].b_is_imm);
  EXPECT_EQ(p.code[2].rb, 0);
  EXPECT_EQ(p.code[3].ra, 2);
  EXPECT_EQ(p.code[3].target, 6u);  // a label after the last instruction names the end
  EXPECT_EQ(p.code[3].join, 4u);
  EXPECT_EQ(p.code[4].line, 5);
  EXPECT_EQ(p.code[4].text, "RECONV");
  EXPECT_EQ(p.code[3].text, "BRZ r2, out, join");
}

TEST(Assembler, StOperandsAreAddressThenValue) {
  const auto p = assemble("ST r3, r4\n", "t.simt");
  EXPECT_EQ(p.code[0].ra, 3);
  EXPECT_EQ(p.code[0].rb, 4);
}

TEST(Assembler, ErrorsNameFileAndLine) {
  EXPECT_EQ(error_of("TID r0\nFOO r1, r2\n"), "t.simt:2: error: unknown mnemonic 'FOO'");
  EXPECT_EQ(error_of("TID r16\n"), "t.simt:1: error: bad register 'r16' (registers are r0-r15)");
  EXPECT_EQ(error_of("TID x\n"), "t.simt:1: error: bad register 'x' (registers are r0-r15)");
  EXPECT_EQ(error_of("JMP nowhere\n"), "t.simt:1: error: undefined label 'nowhere'");
  EXPECT_EQ(error_of("\n\nADD r1, r2\n"), "t.simt:3: error: ADD expects 3 operands (rd, ra, rb|imm), got 2");
  EXPECT_EQ(error_of("RECONV r1\n"), "t.simt:1: error: RECONV expects 0 operands (no operands), got 1");
  EXPECT_EQ(error_of("LI r1, r2\n"), "t.simt:1: error: LI operand 2 must be an immediate, got 'r2'");
  EXPECT_EQ(error_of("MUL 3, r1, r2\n"), "t.simt:1: error: MUL operand 1 must be a register, got '3'");
  EXPECT_EQ(error_of("LI r1, 12x\n"), "t.simt:1: error: bad immediate '12x' (decimal integers only)");
  EXPECT_EQ(error_of("LI r1, 99999999999999999999\n"),
            "t.simt:1: error: immediate '99999999999999999999' does not fit in 64 bits");
  EXPECT_EQ(error_of("a: TID r0\na: TID r1\n"), "t.simt:2: error: label 'a' defined twice (first on line 1)");
  EXPECT_EQ(error_of("BRZ r0, x, x\nx: TID r1\n"), "t.simt:1: error: BRZ join 'x' must label a RECONV instruction");
  EXPECT_EQ(error_of("ADD r1,, r2\n"), "t.simt:1: error: empty operand in 'ADD r1,, r2'");
  EXPECT_EQ(error_of("9x: TID r0\n"), "t.simt:1: error: bad label '9x'");
}

TEST(Assembler, EveryShippedKernelAssembles) {
  for (const auto& k : simt::builtin_kernels()) EXPECT_NO_THROW(simt::load_builtin(k.name)) << k.name;
  EXPECT_NO_THROW(simt::load_builtin("latency.simt"));
}

TEST(Assembler, EmptyProgramIsValidAndDoesNothing) { EXPECT_TRUE(assemble("; nothing\n\n", "t.simt").code.empty()); }
