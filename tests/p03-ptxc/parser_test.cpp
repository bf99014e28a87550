#include "ptxc/parser.hpp"

#include <gtest/gtest.h>

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
