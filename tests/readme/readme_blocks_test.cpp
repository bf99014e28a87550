#include "readme_blocks.hpp"

#include <gtest/gtest.h>

using readme::Block;
using readme::Mode;
using readme::Tolerance;

namespace {

std::vector<std::string> doc(const std::string& text) {
  return readme::split_lines(text);
}

Block shape(const std::string& marker, std::vector<std::string> expected) {
  auto blocks =
      readme::find_blocks(doc("<!-- gpulab-check: " + marker + " -->\n```text\n$ prog\n```\n"));
  blocks.at(0).expected = std::move(expected);
  return blocks.at(0);
}

}  // namespace

TEST(ReadmeBlocks, FindsMarkedBlockWithCommandAndExpectedLines) {
  const auto blocks = readme::find_blocks(doc(
      "# Lab\n<!-- gpulab-check: shape tol=25% vary=pid,x exit=1 -->\n```text\n$ prog --x\nline "
      "one\nline two\n```\nafter\n"));
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].mode, Mode::kShape);
  EXPECT_EQ(blocks[0].expected_exit, 1);
  EXPECT_EQ(blocks[0].tol.kind, Tolerance::Kind::kRelative);
  EXPECT_DOUBLE_EQ(blocks[0].tol.fraction, 0.25);
  EXPECT_EQ(blocks[0].vary, (std::vector<std::string>{"pid", "x"}));
  EXPECT_EQ(blocks[0].command, "prog --x");
  EXPECT_EQ(blocks[0].expected, (std::vector<std::string>{"line one", "line two"}));
  EXPECT_EQ(shape("shape tol=any", {}).tol.kind, Tolerance::Kind::kAny);
  EXPECT_EQ(shape("shape", {}).tol.kind, Tolerance::Kind::kNone);
}

TEST(ReadmeBlocks, UnmarkedFencesAreIgnored) {
  EXPECT_TRUE(readme::find_blocks(doc("```text\n$ prog\nout\n```\n")).empty());
}

TEST(ReadmeBlocks, MalformedMarkersAreErrorsWithLineNumbers) {
  const auto bad = [](const std::string& marker) {
    return doc("<!-- gpulab-check: " + marker + " -->\n```\n$ a\n```\n");
  };
  EXPECT_THROW(readme::find_blocks(bad("fuzzy")), std::runtime_error);
  EXPECT_THROW(readme::find_blocks(bad("shape tol=25")), std::runtime_error);  // no '%'
  EXPECT_THROW(readme::find_blocks(bad("shape tol=lots")), std::runtime_error);
  EXPECT_THROW(readme::find_blocks(bad("exact tol=10%")), std::runtime_error);  // exact is exact
  EXPECT_THROW(readme::find_blocks(bad("exact vary=pid")), std::runtime_error);
  EXPECT_THROW(readme::find_blocks(bad("shape exit=one")), std::runtime_error);
  EXPECT_THROW(readme::find_blocks(bad("shape free-lines=0")), std::runtime_error);
  EXPECT_THROW(readme::find_blocks(bad("shape free-lines=3-1")), std::runtime_error);
  EXPECT_THROW(readme::find_blocks(bad("exact free-lines=1")), std::runtime_error);
  EXPECT_THROW(readme::find_blocks(doc("<!-- gpulab-check: exact -->\n```\nno command\n```\n")),
               std::runtime_error);
  try {
    readme::find_blocks(doc("x\n<!-- gpulab-check: exact -->\n```\n$ a\nnever closed\n"));
    FAIL() << "an unclosed fence must be an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("README:3"), std::string::npos) << e.what();
  }
}

TEST(ReadmeBlocks, ShapeOfReplacesNumbersButKeepsWords) {
  EXPECT_EQ(readme::shape_of("copy 12,345.6 MB/s 1.00x PASS"), "copy # MB/s #x PASS");
  EXPECT_EQ(readme::shape_of("-3e-5 ns"), "# ns");
  // A '-' after a letter or digit is text, not a sign.
  EXPECT_EQ(readme::shape_of("/tmp/readme-30319 2^32-1"), "/tmp/readme-# #^#-#");
}

TEST(ReadmeBlocks, ExactComparisonCatchesAnyChange) {
  Block b;
  b.mode = Mode::kExact;
  b.expected = {"a   1", "b   2"};
  EXPECT_EQ(readme::compare(b, {"a   1", "b   2  ", ""}), "");  // trailing blanks ignored
  EXPECT_NE(readme::compare(b, {"a   1", "b   3"}), "");
  EXPECT_NE(readme::compare(b, {"a   1"}), "");
  EXPECT_NE(readme::compare(b, {"a   1", "b   2", "c"}), "");
  EXPECT_NE(readme::compare(b, {"a 1", "b   2"}), "");  // alignment counts
}

// The issue's case: shape used to blank every number, so this passed.
TEST(ReadmeBlocks, ShapeIntegersAreIdentities) {
  const std::vector<std::string> want = {"exit status 0", "rank 0: PASS", "3 of 3 survivors"};
  for (const char* marker : {"shape", "shape tol=25%", "shape tol=any"}) {
    const Block b = shape(marker, want);
    EXPECT_EQ(readme::compare(b, {"exit status 0", "rank  0:  PASS", "3 of 3 survivors"}), "")
        << marker;  // alignment may move
    EXPECT_NE(readme::compare(b, {"exit status 1", "rank 0: PASS", "3 of 3 survivors"}), "")
        << marker;
    EXPECT_NE(readme::compare(b, {"exit status 0", "rank 2: PASS", "3 of 3 survivors"}), "")
        << marker;
    EXPECT_NE(readme::compare(b, {"exit status 0", "rank 0: PASS", "2 of 3 survivors"}), "")
        << marker;
    EXPECT_NE(readme::compare(b, {"exit status 0", "rank 0: FAIL", "3 of 3 survivors"}), "")
        << marker;
  }
}

TEST(ReadmeBlocks, ShapeWithoutTolComparesDecimalsExactly) {
  const Block b = shape("shape", {"time 4.25 ms"});
  EXPECT_EQ(readme::compare(b, {"time   4.25  ms"}), "");
  EXPECT_NE(readme::compare(b, {"time 4.26 ms"}), "");
}

TEST(ReadmeBlocks, ShapeTolPercentBoundsDecimals) {
  const Block b = shape("shape tol=25%", {"copy 12.0 GB/s 1000 doubles PASS", "zero 0.00 s"});
  EXPECT_EQ(readme::compare(b, {"copy 14.9 GB/s 1000 doubles PASS", "zero 0.01 s"}), "");
  EXPECT_EQ(readme::compare(b, {"copy 9.1 GB/s 1000 doubles PASS", "zero 0.00 s"}), "");
  EXPECT_NE(readme::compare(b, {"copy 15.1 GB/s 1000 doubles PASS", "zero 0.00 s"}), "");
  EXPECT_NE(readme::compare(b, {"copy 8.9 GB/s 1000 doubles PASS", "zero 0.00 s"}), "");
  EXPECT_NE(readme::compare(b, {"copy 12.0 GB/s 1001 doubles PASS", "zero 0.00 s"}), "");
  EXPECT_NE(readme::compare(b, {"copy 12.0 MB/s 1000 doubles PASS", "zero 0.00 s"}), "");  // unit
  EXPECT_NE(readme::compare(b, {"copy 12.0 GB/s 1000 doubles PASS", "zero 0.02 s"}), "");
}

TEST(ReadmeBlocks, ShapeTolAnyNeedsNumbersButNotTheirValues) {
  const Block b = shape("shape tol=any", {"ring 4301.0 us 0.244 GB/s #wrong 0"});
  EXPECT_EQ(readme::compare(b, {"ring 99999.5 us 7.1 GB/s #wrong 0"}), "");
  EXPECT_NE(readme::compare(b, {"ring 99999.5 us 7.1 GB/s #wrong 3"}), "");  // identity
  EXPECT_NE(readme::compare(b, {"ring nan us 7.1 GB/s #wrong 0"}), "");      // must be a number
  EXPECT_NE(readme::compare(b, {"ring 99999.5 us GB/s #wrong 0"}), "");
  EXPECT_NE(readme::compare(b, {"ring 99999 us 7.1 GB/s #wrong 0"}), "");  // still a decimal
}

TEST(ReadmeBlocks, VaryMarksMeasuredNumbersByTheTextBeforeThem) {
  const Block b =
      shape("shape vary=minibox:pid,readme-,##",
            {"container minibox: pid 30327 on the host, pid 1 inside, /tmp/readme-30319",
             "INFO 10000 61547.0 16248"});
  EXPECT_EQ(
      readme::compare(b, {"container minibox: pid 411 on the host, pid 1 inside, /tmp/readme-7",
                          "INFO 10000 61547.0 999"}),
      "");
  // pid 1 inside is not preceded by "minibox:pid": still an identity.
  EXPECT_NE(
      readme::compare(b, {"container minibox: pid 411 on the host, pid 2 inside, /tmp/readme-7",
                          "INFO 10000 61547.0 999"}),
      "");
  // 61547.0 follows one number, not two, and the block has no tol=.
  EXPECT_NE(
      readme::compare(b, {"container minibox: pid 411 on the host, pid 1 inside, /tmp/readme-7",
                          "INFO 10000 61000.0 999"}),
      "");
  EXPECT_NE(readme::compare(b, {"container minibox: pid x on the host, pid 1 inside, /tmp/readme-7",
                                "INFO 10000 61547.0 999"}),
            "");
}

TEST(ReadmeBlocks, NonZeroExitBlocksShowStderrAfterStdout) {
  Block b = shape("shape exit=2", {});
  EXPECT_EQ(readme::shown_output(b, "out\n", "prog: error: bad\n"),
            (std::vector<std::string>{"out", "prog: error: bad"}));
  b.expected_exit = 0;
  EXPECT_EQ(readme::shown_output(b, "out\n", "noise\n"), (std::vector<std::string>{"out"}));
}

TEST(ReadmeBlocks, FreeLinesMustBeThereButTheirTextIsNotCompared) {
  const Block b = shape("shape free-lines=1,3-4",
                        {"cpu: avx512f 2.60 GHz", "kernel 16 bytes", "L1 32 KiB", "L2 1 MiB"});
  EXPECT_EQ(b.free_lines, (std::vector<std::size_t>{1, 3, 4}));
  EXPECT_EQ(readme::compare(b, {"cpu: avx2+fma, 2.45 GHz", "kernel 16 bytes", "L1 48 KiB", "x"}),
            "");
  EXPECT_NE(readme::compare(b, {"cpu: avx2+fma, 2.45 GHz", "kernel 8 bytes", "L1 48 KiB", "x"}),
            "");
  EXPECT_NE(readme::compare(b, {"cpu: avx2+fma, 2.45 GHz", "kernel 16 bytes", "L1 48 KiB"}), "");
}
