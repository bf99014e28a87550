// Reading a user-supplied file whole, with a size cap: a trace, a config or a
// kernel source that is accidentally /dev/zero or a 40 GB log must fail with a
// clear message instead of exhausting memory.
#pragma once

#include <cstddef>
#include <string>

#include "gpulab/expected.hpp"

namespace gpulab {

// The file's bytes, or an Error such as "cannot open 'x': No such file or
// directory" or "'x' is larger than 1 MiB". Reads at most limit + 1 bytes, so
// endless files (pipes, character devices) are refused too.
Expected<std::string> read_text_file(const std::string& path, std::size_t limit);

// "1 MiB", "256 MiB", "4096 bytes": the limit as the error message shows it.
std::string format_byte_limit(std::size_t bytes);

}  // namespace gpulab
