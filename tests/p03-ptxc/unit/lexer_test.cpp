#include "ptxc/lexer.hpp"

#include <gtest/gtest.h>

using ptxc::Tok;

namespace {

std::vector<ptxc::Token> lex_ok(std::string_view src) {
  ptxc::Diagnostics d("t.k", src);
  auto toks = ptxc::lex(src, d);
  EXPECT_FALSE(d.has_errors()) << d.render();
  return toks;
}

}  // namespace

TEST(Lexer, CurriculumExampleTokenStream) {
  // The chapter-2 example: c[i] = a[i] * 2.0
  const auto t = lex_ok("c[i] = a[i] * 2.0");
  const std::vector<Tok> want = {Tok::kIdent,    Tok::kLBracket, Tok::kIdent,    Tok::kRBracket,
                                 Tok::kAssign,   Tok::kIdent,    Tok::kLBracket, Tok::kIdent,
                                 Tok::kRBracket, Tok::kStar,     Tok::kNumber,   Tok::kEof};
  ASSERT_EQ(t.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) EXPECT_EQ(t[k].kind, want[k]) << k;
  EXPECT_EQ(t[10].text, "2.0");
}

TEST(Lexer, KeywordsNumbersAndPositions) {
  const auto t = lex_ok("kernel k() {\n  let x = 1.5e3; // comment\n}");
  EXPECT_EQ(t[0].kind, Tok::kKernel);
  EXPECT_EQ(t[5].kind, Tok::kLet);
  EXPECT_EQ(t[5].loc.line, 2);
  EXPECT_EQ(t[5].loc.col, 3);
  EXPECT_EQ(t[8].text, "1.5e3");
  EXPECT_EQ(t[9].kind, Tok::kSemicolon);
  EXPECT_EQ(t[10].kind, Tok::kRBrace);  // the comment vanished
}

TEST(Lexer, ReportsEveryBadCharacterWithLineAndColumn) {
  const std::string src = "a $ b\n  @";
  ptxc::Diagnostics d("t.k", src);
  const auto t = ptxc::lex(src, d);
  ASSERT_EQ(d.errors().size(), 2U);
  EXPECT_EQ(d.errors()[0].loc.col, 3);
  EXPECT_EQ(d.errors()[1].loc.line, 2);
  EXPECT_EQ(t.back().kind, Tok::kEof);  // lexing went on after the errors
  EXPECT_NE(d.render().find("t.k:1:3: error: unexpected character '$'\n  a $ b\n    ^\n"),
            std::string::npos);
}

// A 280 KB generated line used to be echoed whole under its error; now a
// window around the column, the caret still under the bad character.
TEST(Lexer, ALongLineIsShownAsAWindowAroundTheError) {
  const std::string src = std::string(5000, 'a') + " $ " + std::string(5000, 'b');
  ptxc::Diagnostics d("t.k", src);
  (void)ptxc::lex(src, d);
  ASSERT_EQ(d.errors().size(), 1U);
  const std::string out = d.render();
  EXPECT_LT(out.size(), 2 * ptxc::Diagnostics::kMaxShownColumns + 100) << out.size();
  const auto first = out.find('\n') + 1;
  const auto second = out.find('\n', first) + 1;
  const std::string shown = out.substr(first, second - first - 1);
  const std::string caret = out.substr(second, out.size() - second - 1);
  EXPECT_EQ(shown.rfind("  ...aaa", 0), 0U) << shown;
  EXPECT_EQ(shown.substr(shown.size() - 6), "bbb...") << shown;
  EXPECT_EQ(caret.back(), '^');
  EXPECT_EQ(shown[caret.size() - 1], '$') << shown << "\n" << caret;
}
