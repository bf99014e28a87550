// Places where writes fail, for the tests of output files: a private copy of a
// character device (never /dev/full or /dev/null themselves: a test that went
// wrong would replace the real one), and a small tmpfs that can be filled up or
// made read-only. Everything here but ScratchDir needs root.
#pragma once

#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace gpulab_test {

// A fresh directory under /tmp, removed with its contents.
class ScratchDir {
 public:
  ScratchDir() {
    char tmpl[] = "/tmp/gpulab-test-XXXXXX";
    if (::mkdtemp(tmpl) != nullptr) path_ = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::filesystem::path operator/(const std::string& name) const {
    return path_ / name;
  }

 private:
  std::filesystem::path path_;
};

// A tmpfs of `bytes` mounted on its own scratch directory, unmounted at the end.
// error() is empty when the mount worked, else why it did not (not root, no CAP_SYS_ADMIN).
class SmallTmpfs {
 public:
  explicit SmallTmpfs(std::size_t bytes) {
    if (dir_.path().empty()) {
      error_ = "mkdtemp failed";
      return;
    }
    const std::string opts = "size=" + std::to_string(bytes);
    if (::mount("tmpfs", dir_.path().c_str(), "tmpfs", 0, opts.c_str()) != 0) {
      error_ = std::string("cannot mount a tmpfs: ") + std::strerror(errno);
      return;
    }
    mounted_ = true;
  }
  ~SmallTmpfs() {
    if (mounted_) ::umount2(dir_.path().c_str(), MNT_DETACH);
  }
  SmallTmpfs(const SmallTmpfs&) = delete;
  SmallTmpfs& operator=(const SmallTmpfs&) = delete;

  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] const std::filesystem::path& path() const { return dir_.path(); }
  [[nodiscard]] std::filesystem::path operator/(const std::string& name) const {
    return dir_.path() / name;
  }

  // Fills the file system with one file until ENOSPC; true if it is full now.
  bool fill() const {
    const std::string filler = (dir_.path() / "filler").string();
    std::FILE* f = std::fopen(filler.c_str(), "wb");
    if (f == nullptr) return false;
    std::setvbuf(f, nullptr, _IONBF, 0);
    const std::vector<char> block(4096, 'f');
    while (std::fwrite(block.data(), 1, block.size(), f) == block.size()) {
    }
    const bool full = errno == ENOSPC;
    std::fclose(f);
    return full;
  }

  // Turns the mount read-only; empty on success, else why not.
  std::string remount_read_only() const {
    if (::mount(nullptr, dir_.path().c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr) != 0) {
      return std::string("cannot remount read-only: ") + std::strerror(errno);
    }
    return "";
  }

 private:
  ScratchDir dir_;
  bool mounted_ = false;
  std::string error_;
};

// mknod of a character device, e.g. 1:7 (a private /dev/full) or 1:3 (/dev/null).
// Empty on success, else why not.
inline std::string make_char_device(const std::filesystem::path& path, unsigned major,
                                    unsigned minor) {
  if (::mknod(path.c_str(), S_IFCHR | 0666, makedev(major, minor)) != 0) {
    return std::string("cannot mknod ") + path.string() + ": " + std::strerror(errno);
  }
  return "";
}

// True if `path` is a character device with that major:minor.
inline bool is_char_device(const std::filesystem::path& path, unsigned major, unsigned minor) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode) && ::major(st.st_rdev) == major &&
         ::minor(st.st_rdev) == minor;
}

inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

inline void put(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace gpulab_test
