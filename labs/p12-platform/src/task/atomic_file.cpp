#include "platform/task/atomic_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace gpulab::platform::task {

namespace {

[[noreturn]] void fail(std::string_view what, const std::filesystem::path& p) {
  throw std::runtime_error(fmt::format("{} '{}': {}", what, p.string(), std::strerror(errno)));
}

class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  [[nodiscard]] int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

void write_file_atomic(const std::filesystem::path& path, std::string_view bytes) {
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  // The pid keeps two writers of the same target (two ranks, two attempts) apart.
  const std::filesystem::path tmp =
      dir / fmt::format(".{}.tmp-{}", path.filename().string(), ::getpid());
  {
    const FdCloser fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd.get() < 0) fail("cannot create", tmp);
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int saved = errno;
        ::unlink(tmp.c_str());
        errno = saved;
        fail("cannot write", tmp);
      }
      done += static_cast<std::size_t>(n);
    }
    if (::fsync(fd.get()) != 0) fail("cannot fsync", tmp);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    fail("cannot rename into", path);
  }
  // The rename itself is durable only once the directory entry is.
  const FdCloser dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dfd.get() < 0 || ::fsync(dfd.get()) != 0) fail("cannot fsync directory", dir);
}

}  // namespace gpulab::platform::task
