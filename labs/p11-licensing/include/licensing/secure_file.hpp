// Reading untrusted files with a size limit, and writing files atomically
// through gpulab::write_file (temporary file in the same directory, fsync,
// rename; a device stays a device) with the permissions decided before the
// first byte lands — a private key is never, even for a moment, world-readable.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace licensing {

// Whole file, through gpulab::read_input_file: UsageError naming it if it is missing, unreadable,
// a directory or a device, or larger than max_bytes.
std::string read_file_limited(const std::filesystem::path& path, std::size_t max_bytes);

enum class Overwrite { kNo, kYes };

// Atomic replace with `mode` (e.g. 0600 for secrets). With Overwrite::kNo an
// existing file is an error (keygen must never clobber a vendor key), also when
// it appears meanwhile (gpulab::write_new_file). UsageError on any failure,
// with the old file left as it was.
void write_file_atomic(const std::filesystem::path& path, std::string_view contents, unsigned mode,
                       Overwrite overwrite = Overwrite::kYes);

inline constexpr unsigned kSecretMode = 0600;
inline constexpr unsigned kPublicMode = 0644;

}  // namespace licensing
