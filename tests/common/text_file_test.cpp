#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "gpulab/file.hpp"
#include "gpulab/text.hpp"

namespace {

TEST(Text, TrimStripsWhitespaceBothEnds) {
  EXPECT_EQ(gpulab::trim("  a b\t\r\n"), "a b");
  EXPECT_EQ(gpulab::trim(" \t "), "");
  EXPECT_EQ(gpulab::trim(""), "");
}

TEST(Text, SplitFieldsKeepsEmptyFieldsAndTrims) {
  const auto f = gpulab::split_fields(" a , ,b,");
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0], "a");
  EXPECT_EQ(f[1], "");
  EXPECT_EQ(f[2], "b");
  EXPECT_EQ(f[3], "");
  EXPECT_EQ(gpulab::split_fields("").size(), 1u);
  EXPECT_EQ(gpulab::split_fields("x y\tz", '\t').size(), 2u);
}

TEST(Text, ParseNumberAcceptsOnlyTheWholeField) {
  int i = 0;
  EXPECT_TRUE(gpulab::parse_number("42", i));
  EXPECT_EQ(i, 42);
  EXPECT_FALSE(gpulab::parse_number("42x", i));
  EXPECT_FALSE(gpulab::parse_number("", i));
  EXPECT_FALSE(gpulab::parse_number("99999999999", i));  // out of range for int
  double d = 0;
  EXPECT_TRUE(gpulab::parse_number("2.5e3", d));
  EXPECT_DOUBLE_EQ(d, 2500.0);
  unsigned u = 0;
  EXPECT_FALSE(gpulab::parse_number("-1", u));
}

class ReadTextFile : public ::testing::Test {
 protected:
  std::string path_ = ::testing::TempDir() + "gpulab_read_text_file_" + std::to_string(::getpid());
  void TearDown() override { std::remove(path_.c_str()); }
};

TEST_F(ReadTextFile, ReadsTheWholeFile) {
  std::ofstream(path_) << "line 1\nline 2\n";
  const auto text = gpulab::read_text_file(path_, 1024);
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(text.value(), "line 1\nline 2\n");
}

TEST_F(ReadTextFile, RefusesAFileOverTheLimit) {
  std::ofstream(path_) << std::string(2048, 'x');
  const auto text = gpulab::read_text_file(path_, 1024);
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().message, "'" + path_ + "' is larger than 1024 bytes");
  EXPECT_TRUE(gpulab::read_text_file(path_, 2048));  // exactly at the limit is fine
}

TEST_F(ReadTextFile, RefusesEndlessDevicesMissingFilesAndDirectories) {
  const auto endless = gpulab::read_text_file("/dev/zero", std::size_t{1} << 20);
  ASSERT_FALSE(endless);
  EXPECT_EQ(endless.error().message, "'/dev/zero' is larger than 1 MiB");
  const auto missing = gpulab::read_text_file("/nonexistent/x.csv", 10);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "cannot open '/nonexistent/x.csv': No such file or directory");
  const auto dir = gpulab::read_text_file("/tmp", 10);
  ASSERT_FALSE(dir);
  EXPECT_EQ(dir.error().message, "cannot read '/tmp': Is a directory");
}

}  // namespace

namespace {

TEST(Expected, ValueOrGivesTheFallbackOnlyOnError) {
  const gpulab::Expected<std::string> good{std::string("value")};
  const gpulab::Expected<std::string> bad{gpulab::Error{"nope"}};
  EXPECT_EQ(good.value_or("fallback"), "value");
  EXPECT_EQ(bad.value_or("fallback"), "fallback");
}

}  // namespace
