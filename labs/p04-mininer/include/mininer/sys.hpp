// Small wrappers over the system calls mininer makes many times: reading and
// writing control files, errno text. Errors become exceptions carrying the
// path and the errno, so every failure names the file that refused.
#pragma once

#include <cerrno>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace mininer {

// A system call failed; `err` is the errno it left.
struct SysError : std::runtime_error {
  SysError(const std::string& what, int error) : std::runtime_error(what), err(error) {}
  int err;
};

// "what: strerror(errno)" as a SysError.
[[noreturn]] void throw_errno(const std::string& what, int error = errno);

std::string errno_text(int error);

// The whole file, or nullopt if it cannot be opened.
std::optional<std::string> read_file(const std::string& path);
// Writes `text` with one write(2) (cgroup files take one value per write).
void write_file(const std::string& path, std::string_view text);
bool path_exists(const std::string& path);
bool is_directory(const std::string& path);
// mkdir -p; existing directories are fine.
void make_dirs(const std::string& path, unsigned mode = 0755);
// An empty file to bind-mount a file onto (with its parent directories);
// an existing path is left alone.
void make_file_mount_point(const std::string& path);
// Directory part of a path ("/a/b" -> "/a", "b" -> ".").
std::string dirname_of(const std::string& path);
std::string basename_of(const std::string& path);
// The directory holding the running executable (/proc/self/exe).
std::string self_dir();

}  // namespace mininer
