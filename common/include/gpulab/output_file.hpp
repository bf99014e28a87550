// Writing an output file (--out, --metrics-out, --junit, -o) so that a failure
// never destroys what was there, and a device or pipe given as the path stays
// what it is. Every program's output files go through here.
//
//   if (auto r = gpulab::write_file(path, text); !r) throw gpulab::RunError(r.error().message);
//
// What write_file does, by what `path` is:
//   - a regular file, or nothing: the bytes go to a temporary file ".<name>.XXXXXX" in the same
//     directory (a dot file, so it never matches *.prom), mode set before the first byte, every
//     write checked, fsync, rename over `path`, fsync of the directory. A reader sees the old
//     file or the new one; on any failure the old file is untouched and the temp file removed.
//   - a character device or a FIFO (/dev/null, a pipe): written in place, without creating or
//     truncating, every write checked: /dev/full gives "No space left on device" and stays a
//     device. Renaming over it (as root) would have replaced the device with a regular file.
//   - /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: an already open stream, written in
//     place (appending when it is a regular file, after what the program printed there).
//   - a directory, a block device, a socket, a symbolic link to nothing: refused.
//   - a symbolic link to a regular file: the file it points at is replaced and the link kept,
//     because whoever made the link meant "this name is that file"; replacing the link with a
//     file would silently cut it off from its target.
// Errors are one line naming the path and the reason: "cannot write 'x': No space left on device".
#pragma once

#include <filesystem>
#include <string_view>

#include "gpulab/expected.hpp"

namespace gpulab {

[[nodiscard]] Expected<void> write_file(const std::filesystem::path& path, std::string_view bytes,
                                        unsigned mode = 0644);

// Exclusive create: the same temporary file, then link(2) to `path`, which fails if anything
// is there, even a dangling symbolic link (never followed): the file appears complete, with
// `mode`, or not at all. "cannot create 'x': File exists".
[[nodiscard]] Expected<void> write_new_file(const std::filesystem::path& path,
                                            std::string_view bytes, unsigned mode = 0644);

// The checks write_file makes before writing, without writing anything: for a program that
// should refuse a bad output path before a long run, not after it.
[[nodiscard]] Expected<void> check_output_path(const std::filesystem::path& path);

}  // namespace gpulab
