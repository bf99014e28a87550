#include "licensing/secure_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gpulab/cli.hpp"
#include "gpulab/output_file.hpp"

namespace licensing {

namespace {

std::string errno_text() { return std::strerror(errno); }

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string read_file_limited(const std::filesystem::path& path, std::size_t max_bytes) {
  Fd f;
  // O_NONBLOCK: opening a FIFO someone passed as a "licence" must not hang.
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (f.fd < 0) throw gpulab::UsageError(path.string() + ": cannot open: " + errno_text());
  struct stat st {};
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    throw gpulab::UsageError(path.string() + ": not a regular file");
  }
  std::string out;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(f.fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw gpulab::UsageError(path.string() + ": read failed: " + errno_text());
    }
    if (n == 0) break;
    // Checked while reading, so a huge (or growing) file is never loaded whole.
    if (out.size() + static_cast<std::size_t>(n) > max_bytes) {
      throw gpulab::UsageError(path.string() + ": larger than the " + std::to_string(max_bytes) +
                               "-byte limit for this kind of file");
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

void write_file_atomic(const std::filesystem::path& path, std::string_view contents, unsigned mode,
                       Overwrite overwrite) {
  namespace fs = std::filesystem;
  // symlink_status: a dangling link counts as existing too (it is never followed).
  if (overwrite == Overwrite::kNo && fs::exists(fs::symlink_status(path))) {
    throw gpulab::UsageError(path.string() + ": already exists (refusing to overwrite; use --force)");
  }
  const auto written = overwrite == Overwrite::kNo ? gpulab::write_new_file(path, contents, mode)
                                                   : gpulab::write_file(path, contents, mode);
  if (!written) throw gpulab::UsageError(written.error().message);
}

}  // namespace licensing
