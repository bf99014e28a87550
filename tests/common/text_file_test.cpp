#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <string>
#include <thread>

#include "gpulab/errors.hpp"
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

TEST_F(ReadTextFile, RefusesDevicesMissingFilesAndDirectories) {
  // Before: /dev/zero grew to the cap, /dev/full read as an empty file.
  for (const char* dev : {"/dev/zero", "/dev/full"}) {
    const auto text = gpulab::read_text_file(dev, std::size_t{1} << 20);
    ASSERT_FALSE(text) << dev;
    EXPECT_EQ(text.error().message, std::string("'") + dev + "' is a device, not a file");
  }
  const auto missing = gpulab::read_text_file("/nonexistent/x.csv", 10);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "cannot open '/nonexistent/x.csv': No such file or directory");
  const auto dir = gpulab::read_text_file("/tmp", 10);
  ASSERT_FALSE(dir);
  EXPECT_EQ(dir.error().message, "'/tmp' is a directory, not a file");
}

TEST_F(ReadTextFile, ADeviceThatIsStandardInputIsRead) {
  // `prog /dev/stdin` on a terminal, or under ctest with stdin from /dev/null.
  const int saved = ::dup(STDIN_FILENO);
  const int null = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(null, 0);
  ::dup2(null, STDIN_FILENO);
  const auto text = gpulab::read_text_file("/dev/null", 10);
  const auto other = gpulab::read_text_file("/dev/zero", 10);
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  ::close(null);
  ASSERT_TRUE(text) << text.error().message;
  EXPECT_EQ(text.value(), "");
  EXPECT_FALSE(other);
}

TEST_F(ReadTextFile, AnEndlessPipeStopsAtTheLimit) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::thread writer([fd = fds[1]] {
    const std::string chunk(4096, 'x');
    // Stops when the reader closes its end (EPIPE; SIGPIPE is ignored below).
    while (::write(fd, chunk.data(), chunk.size()) > 0) {
    }
    ::close(fd);
  });
  ::signal(SIGPIPE, SIG_IGN);
  const std::string path = "/proc/self/fd/" + std::to_string(fds[0]);
  const auto text = gpulab::read_text_file(path, std::size_t{1} << 20);
  ::close(fds[0]);
  writer.join();
  ASSERT_FALSE(text);
  EXPECT_EQ(text.error().message, "'" + path + "' is larger than 1 MiB");
}

TEST_F(ReadTextFile, ReadInputFileThrowsAUsageError) {
  try {
    (void)gpulab::read_input_file("/tmp", 10);
    FAIL() << "no exception";
  } catch (const gpulab::UsageError& e) {
    EXPECT_STREQ(e.what(), "'/tmp' is a directory, not a file");
  }
  std::ofstream(path_) << "ok";
  EXPECT_EQ(gpulab::read_input_file(path_, 10), "ok");
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
