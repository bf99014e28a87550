#include "ptxc/sema.hpp"

#include <gtest/gtest.h>

#include "ptxc/parser.hpp"

namespace {

std::string check(std::string_view src) {
  ptxc::Diagnostics d("t.k", src);
  const auto p = ptxc::parse(ptxc::lex(src, d), d);
  ptxc::check(p, d);
  return d.render();
}

}  // namespace

TEST(Sema, AcceptsAWellFormedKernel) {
  EXPECT_EQ(check("kernel k(s: f32, a: f32*, b: f32*) { let t = s * a[i]; b[i] = min(t, 1); }"),
            "");
}

struct SemaCase {
  const char* source;
  const char* message;
};

class SemaErrors : public testing::TestWithParam<SemaCase> {};

TEST_P(SemaErrors, ReportsTheMistake) {
  const auto r = check(GetParam().source);
  EXPECT_NE(r.find(GetParam().message), std::string::npos) << r;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SemaErrors,
    testing::Values(
        SemaCase{"kernel k(a: f32*) { a[i] = b[i]; }", "1:28: error: use of undefined name 'b'"},
        SemaCase{"kernel k(a: f32*) { a[i] = q; }", "use of undefined name 'q'"},
        SemaCase{"kernel k(a: f32*, a: f32) { a[i] = 1; }", "duplicate parameter 'a'"},
        SemaCase{"kernel k(n: f32*) { n[i] = 1; }",
                 "parameter name 'n' is reserved (the hidden element count)"},
        SemaCase{"kernel k(i: f32) { }", "parameter name 'i' is reserved (the thread index)"},
        SemaCase{"kernel k(a: f32*) { a[i] = a; }",
                 "pointer 'a' used as a value; did you mean a[i]?"},
        SemaCase{"kernel k(s: f32, a: f32*) { a[i] = s[i]; }",
                 "'s' is an f32 scalar and cannot be indexed"},
        SemaCase{"kernel k(s: f32) { s[i] = 1; }", "cannot store through 's'"},
        SemaCase{"kernel k(a: f32*) { a[0] = 1; }", "the subscript must be the thread index 'i'"},
        SemaCase{"kernel k(a: f32*) { a[i] = min(1); }", "'min' takes 2 arguments, 1 given"},
        SemaCase{"kernel k(a: f32*) { a[i] = relu(1, 2); }", "'relu' takes 1 argument, 2 given"},
        SemaCase{"kernel k(a: f32*) { a[i] = tanh(1); }", "unknown function 'tanh'"},
        SemaCase{"kernel k(a: f32*) { a[i] = n; }", "'n' is the hidden element count"},
        SemaCase{"kernel k(a: f32*) { a[i] = i; }",
                 "'i' is the thread index and can only be used as a subscript"},
        SemaCase{"kernel k(a: f32*) { let x = 1; let x = 2; }", "'x' is already defined"},
        SemaCase{"kernel k(a: f32*) {} kernel k(b: f32*) {}", "duplicate kernel 'k'"},
        SemaCase{"kernel k(max: f32) {}", "parameter name 'max' is a built-in function"}));

TEST(Sema, ReportsSeveralErrorsInOneRun) {
  const auto r = check("kernel k(a: f32*) {\n  a[i] = x;\n  a[i] = y;\n}");
  EXPECT_NE(r.find("t.k:2:10: error: use of undefined name 'x'"), std::string::npos);
  EXPECT_NE(r.find("t.k:3:10: error: use of undefined name 'y'"), std::string::npos);
}
