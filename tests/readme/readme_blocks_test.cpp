#include "readme_blocks.hpp"

#include <gtest/gtest.h>

using readme::Block;
using readme::Mode;

namespace {

std::vector<std::string> doc(const std::string& text) { return readme::split_lines(text); }

}  // namespace

TEST(ReadmeBlocks, FindsMarkedBlockWithCommandAndExpectedLines) {
  const auto blocks = readme::find_blocks(doc(
      "# Lab\n<!-- gpulab-check: shape exit=1 -->\n```text\n$ prog --x\nline one\nline two\n```\nafter\n"));
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].mode, Mode::kShape);
  EXPECT_EQ(blocks[0].expected_exit, 1);
  EXPECT_EQ(blocks[0].command, "prog --x");
  EXPECT_EQ(blocks[0].expected, (std::vector<std::string>{"line one", "line two"}));
}

TEST(ReadmeBlocks, UnmarkedFencesAreIgnored) {
  EXPECT_TRUE(readme::find_blocks(doc("```text\n$ prog\nout\n```\n")).empty());
}

TEST(ReadmeBlocks, MalformedMarkersAreErrorsWithLineNumbers) {
  EXPECT_THROW(readme::find_blocks(doc("<!-- gpulab-check: fuzzy -->\n```\n$ a\n```\n")), std::runtime_error);
  EXPECT_THROW(readme::find_blocks(doc("<!-- gpulab-check: exact -->\n```\nno command\n```\n")), std::runtime_error);
  try {
    readme::find_blocks(doc("x\n<!-- gpulab-check: exact -->\n```\n$ a\nnever closed\n"));
    FAIL() << "an unclosed fence must be an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("README:3"), std::string::npos) << e.what();
  }
}

TEST(ReadmeBlocks, ShapeReplacesNumbersButKeepsWords) {
  EXPECT_EQ(readme::shape_of("copy 12,345.6 MB/s 1.00x PASS"), "copy # MB/s #x PASS");
  EXPECT_EQ(readme::shape_of("-3e-5 ns"), "# ns");
}

TEST(ReadmeBlocks, ExactComparisonCatchesAnyChange) {
  Block b;
  b.mode = Mode::kExact;
  b.expected = {"a   1", "b   2"};
  EXPECT_EQ(readme::compare(b, {"a   1", "b   2  ", ""}), "");  // trailing blanks ignored
  EXPECT_NE(readme::compare(b, {"a   1", "b   3"}), "");
  EXPECT_NE(readme::compare(b, {"a   1"}), "");
  EXPECT_NE(readme::compare(b, {"a   1", "b   2", "c"}), "");
}

TEST(ReadmeBlocks, ShapeComparisonAllowsNumbersAndAlignmentToMove) {
  Block b;
  b.mode = Mode::kShape;
  b.expected = {"copy     12.5 GB/s  PASS"};
  EXPECT_EQ(readme::compare(b, {"copy  9999.25 GB/s PASS"}), "");
  EXPECT_NE(readme::compare(b, {"copy  9999.25 GB/s FAIL"}), "");  // verdicts must match
  EXPECT_NE(readme::compare(b, {"copy  9999.25 MB/s PASS"}), "");  // units must match
}
