// Reading a user-supplied file whole, with a size cap: a trace, a config or a
// kernel source that is accidentally /dev/zero, a directory or a 40 GB log must
// fail with a clear message instead of exhausting memory or reading as empty.
#pragma once

#include <cstddef>
#include <string>

#include "gpulab/expected.hpp"

namespace gpulab {

// The file's bytes, or an Error such as "cannot open 'x': No such file or
// directory", "'x' is a directory, not a file", "'x' is a device, not a file"
// or "'x' is larger than 1 MiB". Reads at most limit + 1 bytes, so endless
// inputs (pipes, FIFOs) are refused too. A device is refused unless it is this
// process's standard input (`prog /dev/stdin` on a terminal); a FIFO without a
// writer reads as empty instead of blocking the open.
Expected<std::string> read_text_file(const std::string& path, std::size_t limit);

// read_text_file for a file the user named: the same bytes, or a
// gpulab::UsageError (exit 2) carrying the same message.
std::string read_input_file(const std::string& path, std::size_t limit);

// "1 MiB", "256 MiB", "4096 bytes": the limit as the error message shows it.
std::string format_byte_limit(std::size_t bytes);

}  // namespace gpulab
