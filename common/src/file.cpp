#include "gpulab/file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gpulab/errors.hpp"

namespace gpulab {

std::string format_byte_limit(std::size_t bytes) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  if (bytes >= kMiB && bytes % kMiB == 0) return fmt::format("{} MiB", bytes / kMiB);
  return fmt::format("{} bytes", bytes);
}

namespace {

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

bool is_standard_input(const struct stat& st) {
  struct stat in {};
  return ::fstat(STDIN_FILENO, &in) == 0 && in.st_dev == st.st_dev && in.st_ino == st.st_ino;
}

}  // namespace

Expected<std::string> read_text_file(const std::string& path, std::size_t limit) {
  // O_NONBLOCK: opening a FIFO nobody writes to, or a device such as a tape,
  // must not hang before we can look at what the path is.
  const Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (f.fd < 0) return Error{fmt::format("cannot open '{}': {}", path, std::strerror(errno))};
  struct stat st {};
  if (::fstat(f.fd, &st) != 0)
    return Error{fmt::format("cannot read '{}': {}", path, std::strerror(errno))};
  if (S_ISDIR(st.st_mode)) return Error{fmt::format("'{}' is a directory, not a file", path)};
  if ((S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) && !is_standard_input(st))
    return Error{fmt::format("'{}' is a device, not a file", path)};
  // Blocking reads from here on: a pipe whose writer is slow is waited for.
  ::fcntl(f.fd, F_SETFL, ::fcntl(f.fd, F_GETFL) & ~O_NONBLOCK);
  std::string text;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(f.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error{fmt::format("cannot read '{}': {}", path, std::strerror(errno))};
    if (n == 0) break;
    if (text.size() + static_cast<std::size_t>(n) > limit)
      return Error{fmt::format("'{}' is larger than {}", path, format_byte_limit(limit))};
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

std::string read_input_file(const std::string& path, std::size_t limit) {
  auto text = read_text_file(path, limit);
  if (!text) throw UsageError(text.error().message);
  return std::move(text).value();
}

}  // namespace gpulab
