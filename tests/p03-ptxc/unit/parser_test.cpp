#include "ptxc/parser.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "ptxc/compiler.hpp"
#include "ptxc/diagnostics.hpp"

namespace {

ptxc::Program parse_ok(std::string_view src) {
  ptxc::Diagnostics d("t.k", src);
  auto p = ptxc::parse(ptxc::lex(src, d), d);
  EXPECT_FALSE(d.has_errors()) << d.render();
  return p;
}

std::string errors_of(std::string_view src) {
  ptxc::Diagnostics d("t.k", src);
  (void)ptxc::parse(ptxc::lex(src, d), d);
  return d.render();
}

}  // namespace

TEST(Parser, MultiplicationBindsTighterThanAddition) {
  const auto p = parse_ok("kernel k(a: f32*, b: f32*) { b[i] = a[i] + 2 * a[i] - 1; }");
  EXPECT_EQ(ptxc::dump_ast(p),
            "(kernel k\n  (params (a f32*) (b f32*))\n  (store b i (- (+ (index a i) (* 2 (index a "
            "i))) 1)))\n");
}

TEST(Parser, UnaryMinusParenthesesCallsAndLets) {
  const auto p =
      parse_ok("kernel k(s: f32, a: f32*) { let t = -(a[i] / s); a[i] = max(t, relu(-t)); }");
  EXPECT_EQ(ptxc::dump_ast(p),
            "(kernel k\n  (params (s f32) (a f32*))\n  (let t (neg (/ (index a i) s)))\n"
            "  (store a i (max t (relu (neg t)))))\n");
}

TEST(Parser, SeveralKernelsPerFile) {
  const auto p = parse_ok("kernel a(x: f32*) { x[i] = 1; }\nkernel b(y: f32*) { y[i] = 2; }");
  ASSERT_EQ(p.kernels.size(), 2U);
  EXPECT_EQ(p.kernels[1].name, "b");
}

TEST(Parser, LiteralsAreRoundedToF32Once) {
  const auto p = parse_ok("kernel k(a: f32*) { a[i] = 0.1; }");
  EXPECT_EQ(p.kernels[0].body[0].value->value, 0.1F);
}

TEST(Parser, RecoversAtStatementBoundariesAndReportsEachError) {
  const auto r = errors_of("kernel k(a: f32*) {\n  a[i] = 1 +;\n  a[i] = (2;\n  a[i] = 3;\n}");
  EXPECT_NE(r.find("t.k:2:13: error: expected an expression, found ';'"), std::string::npos) << r;
  EXPECT_NE(r.find("t.k:3:12: error: expected ')' to close the parenthesis, found ';'"),
            std::string::npos)
      << r;
}

TEST(Parser, RejectsUnknownTypesAndMissingPieces) {
  EXPECT_NE(errors_of("kernel k(a: i64*) {}").find("unknown type 'i64'"), std::string::npos);
  EXPECT_NE(errors_of("kernel k(a f32) {}").find("expected ':' after the parameter name"),
            std::string::npos);
  EXPECT_NE(errors_of("kernel k(a: f32*) { a[i] = 1;")
                .find("expected '}' to close the kernel body, found end of file"),
            std::string::npos);
  EXPECT_NE(errors_of("kernel k(a: f32*) { a[i] = 1e99; }").find("does not fit in f32"),
            std::string::npos);
}

TEST(Parser, DeepNestingIsAnErrorNotAStackOverflow) {
  std::string src = "kernel k(a: f32*) { a[i] = ";
  src += std::string(100000, '(') + "1;}";
  EXPECT_NE(errors_of(src).find("nested too deeply"), std::string::npos);
  std::string neg = "kernel k(a: f32*) { a[i] = " + std::string(100000, '-') + "1;}";
  EXPECT_NE(errors_of(neg).find("nested too deeply"), std::string::npos);
}

namespace {

// kernel k(a: f32*) { a[i] = a[i] + a[i] + ... ; } with `terms` terms.
std::string flat_sum(int terms) {
  std::string src = "kernel k(a: f32*) { a[i] = a[i]";
  for (int t = 1; t < terms; ++t) src += " + a[i]";
  return src + "; }";
}

}  // namespace

// A flat sum is parsed by a loop but is as deep as it is long; 40,000 terms
// (about 280 KB) used to overflow the stack in sema. Now the operator that
// crosses the cap is a located error, and nothing downstream sees the tree.
TEST(Parser, LongFlatExpressionIsALocatedErrorNotAStackOverflow) {
  const std::string src = flat_sum(40000);
  const std::string errors = errors_of(src);
  // a[i] is 2 levels deep, so the 999th '+' makes level 1001.
  std::size_t plus = 0;
  for (int n = 0; n < 999; ++n) plus = src.find('+', plus + 1);
  EXPECT_EQ(errors.rfind(fmt::format("t.k:1:{}: error: expression too deep: more than 1000 levels "
                                     "of operations (split it into steps with 'let')\n",
                                     plus + 1),
                         0),
            0U)
      << errors.substr(0, 300);
  EXPECT_EQ(errors.find("error:", errors.find("error:") + 1), std::string::npos) << errors;
  try {
    (void)ptxc::compile(src, "t.k", ptxc::CompileOptions::at_level(1));
    ADD_FAILURE() << "a 40,000-term expression compiled";
  } catch (const ptxc::CompileError& e) {
    EXPECT_EQ(e.error_count, 1U);
  }
}

// Just under the cap, every stage (sema, lowering, the passes, the emitter)
// handles the depth.
TEST(Parser, ExpressionJustUnderTheCapCompiles) {
  const auto c = ptxc::compile(flat_sum(999), "t.k", ptxc::CompileOptions::at_level(1));
  EXPECT_NE(c.ptx.find(".entry k"), std::string::npos);
  EXPECT_NE(errors_of(flat_sum(1000)).find("expression too deep"), std::string::npos);
}
