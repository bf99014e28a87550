// gpulab::write_file on what needs no root: regular files, FIFOs, directories,
// links, open streams. Devices, full and read-only file systems: root/.
#include "gpulab/output_file.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "gpulab_test/hostile_fs.hpp"

namespace {

namespace fs = std::filesystem;
using gpulab_test::put;
using gpulab_test::ScratchDir;
using gpulab_test::slurp;

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 ? static_cast<unsigned>(st.st_mode & 07777) : ~0U;
}

int entries(const fs::path& dir) {
  return static_cast<int>(std::distance(fs::directory_iterator(dir), {}));
}

TEST(OutputFile, ReplacesARegularFileWithExactlyTheMode) {
  ScratchDir dir;
  const fs::path file = dir / "out.prom";
  put(file, "old\n");
  ::chmod(file.c_str(), 0666);
  const mode_t old_umask = ::umask(077);  // the mode is set, not filtered by the umask
  const auto r = gpulab::write_file(file, "new\n", 0640);
  ::umask(old_umask);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(slurp(file), "new\n");
  EXPECT_EQ(mode_of(file), 0640U);
  EXPECT_EQ(entries(dir.path()), 1);  // no temporary file left
  ASSERT_TRUE(gpulab::write_file(dir / "fresh.txt", "x").ok());
  EXPECT_EQ(mode_of(dir / "fresh.txt"), 0644U);
}

TEST(OutputFile, ReplacesTheFileNotTheInodeReadersHold) {
  ScratchDir dir;
  const fs::path file = dir / "lab.prom";
  put(file, "a 1\n");
  struct stat before {};
  ASSERT_EQ(::stat(file.c_str(), &before), 0);
  ASSERT_TRUE(gpulab::write_file(file, "a 2\n").ok());
  struct stat after {};
  ASSERT_EQ(::stat(file.c_str(), &after), 0);
  EXPECT_NE(before.st_ino, after.st_ino);  // renamed into place, not rewritten
}

TEST(OutputFile, ADirectoryIsRefusedAndLeftAlone) {
  ScratchDir dir;
  fs::create_directory(dir / "d");
  put(dir / "d" / "inside", "keep");
  const auto r = gpulab::write_file(dir / "d", "x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "cannot write '" + (dir / "d").string() + "': it is a directory");
  EXPECT_TRUE(fs::is_directory(dir / "d"));
  EXPECT_EQ(slurp(dir / "d" / "inside"), "keep");
  EXPECT_EQ(entries(dir.path()), 1);
  EXPECT_FALSE(gpulab::check_output_path(dir / "d").ok());
}

TEST(OutputFile, AMissingDirectoryIsAOneLineError) {
  ScratchDir dir;
  const fs::path file = dir / "missing" / "x.prom";
  const auto r = gpulab::write_file(file, "x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "cannot write '" + file.string() + "': No such file or directory");
  const auto c = gpulab::check_output_path(file);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, r.error().message);
  EXPECT_TRUE(gpulab::check_output_path(dir / "absent.xml").ok());
}

TEST(OutputFile, AFifoIsWrittenInPlace) {
  ScratchDir dir;
  const fs::path fifo = dir / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // The reader is there first (non-blocking open), so the writer's open returns at once and a
  // writer that wrongly renamed over the FIFO leaves the reader with nothing instead of a hang.
  const int rd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(rd, 0);
  const auto r = gpulab::write_file(fifo, "through the pipe\n");
  char buf[64] = {};
  const ssize_t n = ::read(rd, buf, sizeof buf);
  ::close(rd);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0), "through the pipe\n");
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(entries(dir.path()), 1);
}

TEST(OutputFile, ALinkToAFileKeepsTheLinkAndReplacesTheFile) {
  ScratchDir dir;
  fs::create_directory(dir / "real");
  put(dir / "real" / "target.prom", "old\n");
  fs::create_symlink("real/target.prom", dir / "link.prom");
  ASSERT_TRUE(gpulab::write_file(dir / "link.prom", "new\n").ok());
  EXPECT_TRUE(fs::is_symlink(dir / "link.prom"));
  EXPECT_EQ(slurp(dir / "real" / "target.prom"), "new\n");
  EXPECT_EQ(entries(dir / "real"), 1);  // the temporary file was made next to the target
}

TEST(OutputFile, ALinkToNothingIsRefused) {
  ScratchDir dir;
  fs::create_symlink(dir / "nowhere", dir / "dangling");
  const auto r = gpulab::write_file(dir / "dangling", "x");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("a symbolic link to a missing file"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "nowhere"));
}

TEST(OutputFile, AnOpenStreamIsWrittenInPlace) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const auto r = gpulab::write_file("/dev/fd/" + std::to_string(fds[1]), "to the pipe\n");
  ::close(fds[1]);
  char buf[64] = {};
  const ssize_t n = ::read(fds[0], buf, sizeof buf);
  ::close(fds[0]);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0), "to the pipe\n");

  // A redirect to a regular file: appended after what the program already printed there.
  ScratchDir dir;
  put(dir / "log", "printed\n");
  const int fd = ::open((dir / "log").c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(fd, 0);
  const auto f = gpulab::write_file("/proc/self/fd/" + std::to_string(fd), "metrics\n");
  ::close(fd);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(slurp(dir / "log"), "printed\nmetrics\n");
}

TEST(OutputFile, WriteNewFileNeverReplaces) {
  ScratchDir dir;
  const mode_t old_umask = ::umask(0);
  const auto r = gpulab::write_new_file(dir / "k.key", "secret", 0600);
  ::umask(old_umask);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(mode_of(dir / "k.key"), 0600U);
  const auto again = gpulab::write_new_file(dir / "k.key", "other", 0600);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().message, "cannot create '" + (dir / "k.key").string() + "': File exists");
  EXPECT_EQ(slurp(dir / "k.key"), "secret");
  fs::create_symlink(dir / "nowhere", dir / "planted");  // never followed
  EXPECT_FALSE(gpulab::write_new_file(dir / "planted", "x").ok());
  EXPECT_FALSE(fs::exists(dir / "nowhere"));
  EXPECT_EQ(entries(dir.path()), 2);
}

}  // namespace
