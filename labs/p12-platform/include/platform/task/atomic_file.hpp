// Publishing a file so that a reader sees either nothing or all of it: write
// a temporary file in the same directory, fsync it, rename it over the target,
// fsync the directory. Checkpoints and rendezvous records are written this way,
// so a task killed mid-write never leaves a torn file behind.
#pragma once

#include <filesystem>
#include <string_view>

namespace gpulab::platform::task {

// Throws std::runtime_error naming the path and errno's text on failure.
void write_file_atomic(const std::filesystem::path& path, std::string_view bytes);

}  // namespace gpulab::platform::task
