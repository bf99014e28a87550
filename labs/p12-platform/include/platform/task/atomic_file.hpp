// Publishing a file so that a reader sees either nothing or all of it:
// common's gpulab::write_file (temp file, fsync, rename, fsync of the
// directory). Checkpoints and rendezvous records are written this way, so a
// task killed mid-write never leaves a torn file behind.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string_view>

#include "gpulab/output_file.hpp"

namespace gpulab::platform::task {

// Throws std::runtime_error naming the path and errno's text on failure.
inline void write_file_atomic(const std::filesystem::path& path, std::string_view bytes) {
  if (auto w = gpulab::write_file(path, bytes); !w) throw std::runtime_error(w.error().message);
}

}  // namespace gpulab::platform::task
