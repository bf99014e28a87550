#include "fakegpu/mount_point.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace fakegpu {

std::string stale_mount_advice(const std::string& mountdir) {
  return mountdir + " is a stale FUSE mount: the fakegpud that served it is gone (" +
         std::strerror(ENOTCONN) + "); unmount it with `fusermount3 -u " + mountdir +
         "` (or `umount " + mountdir + "` as root), then start fakegpud again";
}

std::optional<std::string> mountdir_problem(const std::string& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOTCONN) return stale_mount_advice(dir);
    if (err == ENOENT) return dir + " does not exist: create it first (mkdir -p " + dir + ")";
    return "cannot use " + dir + ": " + std::strerror(err);
  }
  if (!S_ISDIR(st.st_mode)) return dir + " is not a directory: fakegpud mounts on an empty directory";
  return std::nullopt;
}

std::string parent_dir(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace fakegpu
