#include "licensing/secure_file.hpp"

#include "gpulab/errors.hpp"
#include "gpulab/file.hpp"
#include "gpulab/output_file.hpp"

namespace licensing {

std::string read_file_limited(const std::filesystem::path& path, std::size_t max_bytes) {
  // The shared reader: a directory, a device or an endless file is one line naming it.
  return gpulab::read_input_file(path.string(), max_bytes);
}

void write_file_atomic(const std::filesystem::path& path, std::string_view contents, unsigned mode,
                       Overwrite overwrite) {
  namespace fs = std::filesystem;
  // symlink_status: a dangling link counts as existing too (it is never followed).
  if (overwrite == Overwrite::kNo && fs::exists(fs::symlink_status(path))) {
    throw gpulab::UsageError(path.string() + ": already exists (refusing to overwrite; use --force)");
  }
  const auto written = overwrite == Overwrite::kNo ? gpulab::write_new_file(path, contents, mode)
                                                   : gpulab::write_file(path, contents, mode);
  if (!written) throw gpulab::UsageError(written.error().message);
}

}  // namespace licensing
