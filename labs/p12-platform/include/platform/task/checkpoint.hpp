// Training checkpoints: DIR/ckpt-<step>.bin plus DIR/latest naming the newest,
// both published atomically (temp file, fsync, rename). A file is a fixed
// little-endian header — magic, format version, step, parameter count, seed,
// world, model and optimizer settings, the run's first and latest loss, and an
// FNV-1a checksum over header and payload — then the parameters as binary32.
//
// Loading refuses (gpulab::UsageError, exit 2) a file that is truncated, fails
// its checksum, has another magic or version, or was written by a run with
// other settings: resuming from it would silently train a different model, and
// restarting the gang cannot fix it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpulab::platform::task {

inline constexpr char kCheckpointMagic[8] = {'G', 'P', 'L', 'T', 'C', 'K', 'P', 'T'};
inline constexpr std::uint32_t kCheckpointVersion = 1;
inline constexpr std::uint32_t kCheckpointHeaderBytes = 88;

// What identifies the run a checkpoint belongs to; a resume must match all of it.
struct RunIdentity {
  std::uint64_t seed = 0;
  std::uint32_t world = 0;
  std::uint64_t param_count = 0;
  std::uint32_t hidden = 0;
  std::uint64_t batch = 0;
  float lr = 0;
};

struct Checkpoint {
  RunIdentity run;
  std::uint64_t step = 0;  // steps completed; training resumes at step + 1
  double first_loss = 0;   // the loss of step 1 of the run
  double last_loss = 0;    // the loss of `step`
  std::vector<float> params;
};

std::string encode_checkpoint(const Checkpoint& c);
// `origin` names the file in error messages.
Checkpoint decode_checkpoint(std::string_view bytes, const std::string& origin);

// "ckpt-00000040.bin": zero-padded so a directory listing sorts by step.
std::string checkpoint_file_name(std::uint64_t step);

// Writes ckpt-<step>.bin, then points `latest` at it, then removes checkpoints
// older than the previous one (two are kept: the newest and its predecessor).
std::filesystem::path write_checkpoint(const std::filesystem::path& dir, const Checkpoint& c);

// The checkpoint `latest` names; nullopt when the directory has no `latest`
// (a fresh run). Throws UsageError for a corrupt file or a dangling pointer.
std::optional<Checkpoint> load_latest_checkpoint(const std::filesystem::path& dir);

// UsageError naming every field that differs from what this run expects.
void require_same_run(const Checkpoint& c, const RunIdentity& expected, const std::string& origin);

}  // namespace gpulab::platform::task
