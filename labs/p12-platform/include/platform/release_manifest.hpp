// The signed release manifest (docs/release/checklist.md): SHA256SUMS lists the SHA-256 of
// every artifact in a release folder in sha256sum's own format, so `sha256sum -c SHA256SUMS`
// checks it too, and SHA256SUMS.sig holds an Ed25519 signature over it, made and checked
// through P11's licensing keys (licensectl keygen writes the pair). Verification refuses a
// changed, missing or unlisted artifact and a changed manifest, each naming the file.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "licensing/ed25519.hpp"

namespace platform::release {

inline constexpr std::string_view kManifestName = "SHA256SUMS";
inline constexpr std::string_view kSignatureName = "SHA256SUMS.sig";
// What is signed is this line and then the manifest's bytes: a signature made with the same
// vendor key over a licence (P11) can never pass as a release signature, nor the reverse.
inline constexpr std::string_view kSignedPrefix = "gpulab-release-manifest-v1\n";
inline constexpr std::size_t kMaxArtifactBytes = std::size_t{1} << 30;  // 1 GiB per artifact
inline constexpr std::size_t kMaxArtifacts = 10'000;
inline constexpr std::size_t kMaxManifestBytes = std::size_t{16} << 20;  // 16 MiB

struct Entry {
  std::string path;    // relative to the release folder, '/'-separated
  std::string sha256;  // 64 lowercase hex digits
};

// Every plain file under `dir` (recursively) except SHA256SUMS and SHA256SUMS.sig at its top,
// as relative paths in byte order. UsageError for a symbolic link or a special file (a release
// holds plain files only) and for a name sha256sum would have to escape (newline, backslash).
std::vector<std::string> list_artifacts(const std::filesystem::path& dir);

// The SHA-256 of one artifact, read through gpulab::read_text_file (capped at 1 GiB).
std::string artifact_sha256(const std::filesystem::path& file);

// "<sha256>  <path>\n" per entry, in the order given: sha256sum's text format.
std::string render_manifest(const std::vector<Entry>& entries);
// The reverse, strict: 64 lowercase hex digits, two spaces, a relative path, no duplicates.
// UsageError "SHA256SUMS:LINE: ..." otherwise.
std::vector<Entry> parse_manifest(std::string_view text);

// SHA256SUMS.sig's one line: "ed25519 <key id> <base64 signature>\n".
std::string render_signature(const licensing::PrivateKey& key, std::string_view manifest);

struct Summary {
  std::size_t artifacts = 0;
  std::string key_id;  // licensing::PublicKey::key_id() of the signing key
};

// Hashes every artifact of `dir` and writes SHA256SUMS and SHA256SUMS.sig there (replacing
// both). UsageError when `dir` is not a folder or holds no artifact.
Summary write_manifest(const std::filesystem::path& dir, const licensing::PrivateKey& key);

// One problem with one file of the release, as verification reports it.
struct Problem {
  std::string path;  // relative to the release folder
  std::string what;  // "SHA-256 differs from SHA256SUMS (changed after signing)", ...
};

struct Verification {
  Summary summary;
  std::vector<Problem> problems;  // empty: every artifact matches
};

// Checks SHA256SUMS.sig against `key`, then every listed artifact's SHA-256, then that no
// unlisted file is there. A missing or unsigned manifest throws gpulab::RunError naming the
// file (nothing in the folder can be trusted then); artifact problems are returned, all of them.
Verification verify(const std::filesystem::path& dir, const licensing::PublicKey& key);

}  // namespace platform::release
