#include "licensing/secure_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gpulab/cli.hpp"
#include "licensing/digest.hpp"

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
  if (overwrite == Overwrite::kNo && std::filesystem::exists(path)) {
    throw gpulab::UsageError(path.string() + ": already exists (refusing to overwrite; use --force)");
  }
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
  const std::filesystem::path tmp =
      dir / ("." + path.filename().string() + ".tmp-" + to_hex(random_bytes(6)));
  Fd f;
  // O_EXCL + the final mode at creation: no window with wider permissions.
  f.fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, static_cast<mode_t>(mode));
  if (f.fd < 0) throw gpulab::UsageError(path.string() + ": cannot create: " + errno_text());
  // The umask may have removed bits; set exactly the requested mode.
  bool ok = ::fchmod(f.fd, static_cast<mode_t>(mode)) == 0;
  std::size_t done = 0;
  while (ok && done < contents.size()) {
    const ssize_t n = ::write(f.fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ok = false;
    else done += static_cast<std::size_t>(n);
  }
  ok = ok && ::fsync(f.fd) == 0;
  const std::string why = ok ? "" : errno_text();
  ::close(f.fd);
  f.fd = -1;
  if (ok && overwrite == Overwrite::kNo) {
    // link() fails if the target appeared meanwhile; rename() would silently replace it.
    ok = ::link(tmp.c_str(), path.c_str()) == 0;
    const std::string link_why = ok ? "" : errno_text();
    ::unlink(tmp.c_str());
    if (!ok) throw gpulab::UsageError(path.string() + ": cannot create: " + link_why);
    return;
  }
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string w = why.empty() ? errno_text() : why;
    ::unlink(tmp.c_str());
    throw gpulab::UsageError(path.string() + ": cannot write: " + w);
  }
}

}  // namespace licensing
