#include "gpulab/output_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>

namespace gpulab {
namespace {

Error errno_error(std::string_view verb, const std::filesystem::path& path, int err) {
  return Error{fmt::format("cannot {} '{}': {}", verb, path.string(), std::strerror(err))};
}

Error refused(const std::filesystem::path& path, std::string_view what) {
  return Error{fmt::format("cannot write '{}': it is {}", path.string(), what)};
}

// Writes all of `bytes`, retrying short writes and EINTR; 0 or an errno.
int write_all(int fd, std::string_view bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;  // no progress and no reason: never loop forever
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

bool is_open_stream_name(const std::filesystem::path& path) {
  const std::string p = path.string();
  return p == "/dev/stdout" || p == "/dev/stderr" || p.starts_with("/dev/fd/") ||
         p.starts_with("/proc/self/fd/");
}

enum class How { kReplace, kInPlace, kAppend };

struct Plan {
  How how = How::kReplace;
  std::filesystem::path target;  // what is renamed over or opened (a link's target)
};

Expected<Plan> plan_for(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err != ENOENT) return errno_error("write", path, err);
    struct stat lst {};
    if (::lstat(path.c_str(), &lst) == 0) return refused(path, "a symbolic link to a missing file");
    return Plan{How::kReplace, path};
  }
  if (S_ISDIR(st.st_mode)) return refused(path, "a directory");
  if (S_ISBLK(st.st_mode)) return refused(path, "a block device");
  if (S_ISSOCK(st.st_mode)) return refused(path, "a socket");
  if (is_open_stream_name(path))
    return Plan{S_ISREG(st.st_mode) ? How::kAppend : How::kInPlace, path};
  if (!S_ISREG(st.st_mode)) return Plan{How::kInPlace, path};  // character device, FIFO
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::canonical(path, ec);
  if (ec) return errno_error("write", path, ec.value());
  return Plan{How::kReplace, real};
}

Expected<void> write_in_place(const std::filesystem::path& path, std::string_view bytes, How how) {
  // No O_CREAT and no O_TRUNC: a device or pipe is written, never made or emptied.
  const int flags = O_WRONLY | O_NOCTTY | O_CLOEXEC | (how == How::kAppend ? O_APPEND : 0);
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) return errno_error("write", path, errno);
  int err = write_all(fd, bytes);
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) return errno_error("write", path, err);
  return {};
}

// The temporary file, written and synced; on failure it is already removed.
Expected<std::string> write_temp(const std::filesystem::path& shown,
                                 const std::filesystem::path& target, std::string_view bytes,
                                 unsigned mode) {
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  std::string tmp = (dir / ("." + target.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return errno_error("write", shown, errno);
  // The final mode before the first byte: mkstemp's 0600 only ever widens to it, so a secret
  // written with 0600 or 0400 is never readable by others, not even for a moment.
  int err = ::fchmod(fd, static_cast<mode_t>(mode)) == 0 ? 0 : errno;
  if (err == 0) err = write_all(fd, bytes);
  if (err == 0 && ::fsync(fd) != 0) err = errno;  // ENOSPC can first show up here
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) {
    ::unlink(tmp.c_str());
    return errno_error("write", shown, err);
  }
  return tmp;
}

// The rename (or link) is durable only once the directory entry is on disk.
Expected<void> sync_directory(const std::filesystem::path& shown,
                              const std::filesystem::path& target) {
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno_error("write", shown, errno);
  int err = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  if (err == EINVAL) err = 0;  // a file system without directory fsync: nothing more to do
  if (err != 0) return errno_error("write", shown, err);
  return {};
}

}  // namespace

Expected<void> write_file(const std::filesystem::path& path, std::string_view bytes,
                          unsigned mode) {
  auto plan = plan_for(path);
  if (!plan) return plan.error();
  const Plan& p = plan.value();
  if (p.how != How::kReplace) return write_in_place(path, bytes, p.how);
  auto tmp = write_temp(path, p.target, bytes, mode);
  if (!tmp) return tmp.error();
  if (::rename(tmp.value().c_str(), p.target.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.value().c_str());
    return errno_error("replace", path, err);
  }
  return sync_directory(path, p.target);
}

Expected<void> write_new_file(const std::filesystem::path& path, std::string_view bytes,
                              unsigned mode) {
  auto tmp = write_temp(path, path, bytes, mode);
  if (!tmp) return tmp.error();
  // link() fails if the name exists; rename() would silently replace it.
  const int err = ::link(tmp.value().c_str(), path.c_str()) == 0 ? 0 : errno;
  ::unlink(tmp.value().c_str());
  if (err != 0) return errno_error("create", path, err);
  return sync_directory(path, path);
}

Expected<void> check_output_path(const std::filesystem::path& path) {
  auto plan = plan_for(path);
  if (!plan) return plan.error();
  if (plan.value().how != How::kReplace) return {};
  const std::filesystem::path& target = plan.value().target;
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  // The temporary file is created in the directory: it has to exist and take new names.
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return errno_error("write", path, errno);
  return {};
}

}  // namespace gpulab
