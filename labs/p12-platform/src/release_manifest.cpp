#include "platform/release_manifest.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <system_error>

#include "gpulab/errors.hpp"
#include "gpulab/file.hpp"
#include "licensing/digest.hpp"
#include "licensing/encoding.hpp"
#include "licensing/secure_file.hpp"

namespace platform::release {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kHexDigits = 64;

// sha256sum escapes a name with a newline or a backslash ("\" before the line); refusing
// those keeps SHA256SUMS readable by sha256sum -c and by parse_manifest alike.
bool plain_name(std::string_view path) {
  return !path.empty() && std::none_of(path.begin(), path.end(), [](char c) {
    return c == '\n' || c == '\r' || c == '\\' || c == '\0';
  });
}

// A manifest path is relative and stays inside the folder: no "/x", no "..", no "./".
bool safe_relative(std::string_view path) {
  if (!plain_name(path) || path.front() == '/') return false;
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto end = std::min(path.find('/', start), path.size());
    const auto part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

bool top_level_manifest_file(const std::string& rel) {
  return rel == kManifestName || rel == kSignatureName;
}

std::string signed_bytes(std::string_view manifest) {
  std::string s(kSignedPrefix);
  s.append(manifest);
  return s;
}

}  // namespace

std::vector<std::string> list_artifacts(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw gpulab::UsageError(fmt::format("'{}' is not a folder", dir.string()));
  std::vector<std::string> out;
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec);
  if (ec) throw gpulab::UsageError(fmt::format("cannot list '{}': {}", dir.string(), ec.message()));
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec)
      throw gpulab::UsageError(fmt::format("cannot list '{}': {}", dir.string(), ec.message()));
    const auto& entry = *it;
    const std::string rel = entry.path().lexically_relative(dir).generic_string();
    const auto status = entry.symlink_status(ec);
    if (ec) throw gpulab::UsageError(fmt::format("{}: {}", entry.path().string(), ec.message()));
    if (fs::is_directory(status)) continue;
    if (fs::is_symlink(status)) {
      throw gpulab::UsageError(
          fmt::format("{}: is a symbolic link; a release holds plain files only", rel));
    }
    if (!fs::is_regular_file(status)) {
      throw gpulab::UsageError(
          fmt::format("{}: is not a plain file; a release holds plain files only", rel));
    }
    if (!plain_name(rel)) {
      throw gpulab::UsageError(
          fmt::format("'{}': a newline or backslash in a name cannot be listed", rel));
    }
    if (top_level_manifest_file(rel)) continue;
    out.push_back(rel);
    if (out.size() > kMaxArtifacts) {
      throw gpulab::UsageError(
          fmt::format("'{}' holds more than {} files", dir.string(), kMaxArtifacts));
    }
  }
  // An increment that failed ends the walk with `ec` set: never a silently short list.
  if (ec) throw gpulab::UsageError(fmt::format("cannot list '{}': {}", dir.string(), ec.message()));
  std::sort(out.begin(), out.end());
  return out;
}

std::string artifact_sha256(const fs::path& file) {
  return licensing::sha256_hex(gpulab::read_input_file(file.string(), kMaxArtifactBytes));
}

std::string render_manifest(const std::vector<Entry>& entries) {
  std::string out;
  for (const auto& e : entries) out += fmt::format("{}  {}\n", e.sha256, e.path);
  return out;
}

std::vector<Entry> parse_manifest(std::string_view text) {
  std::vector<Entry> out;
  std::set<std::string, std::less<>> seen;
  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    ++line_no;
    const auto nl = text.find('\n', pos);
    if (nl == std::string_view::npos) {
      throw gpulab::UsageError(
          fmt::format("{}:{}: the last line has no newline", kManifestName, line_no));
    }
    const auto line = text.substr(pos, nl - pos);
    pos = nl + 1;
    const auto where = fmt::format("{}:{}", kManifestName, line_no);
    if (line.size() < kHexDigits + 3 || line.substr(kHexDigits, 2) != "  ") {
      throw gpulab::UsageError(where + ": expected '<64 hex digits>  <path>'");
    }
    Entry e{std::string(line.substr(kHexDigits + 2)), std::string(line.substr(0, kHexDigits))};
    if (!licensing::is_lower_hex(e.sha256, kHexDigits)) {
      throw gpulab::UsageError(where + ": the SHA-256 must be 64 lowercase hex digits");
    }
    if (!safe_relative(e.path)) {
      throw gpulab::UsageError(
          fmt::format("{}: path '{}' must be relative, inside the release folder", where, e.path));
    }
    if (!seen.insert(e.path).second)
      throw gpulab::UsageError(fmt::format("{}: {} is listed twice", where, e.path));
    out.push_back(std::move(e));
  }
  return out;
}

std::string render_signature(const licensing::PrivateKey& key, std::string_view manifest) {
  return fmt::format("ed25519 {} {}\n", key.public_key().key_id(),
                     licensing::to_base64(key.sign(signed_bytes(manifest))));
}

Summary write_manifest(const fs::path& dir, const licensing::PrivateKey& key) {
  const auto files = list_artifacts(dir);
  if (files.empty())
    throw gpulab::UsageError(fmt::format("'{}' holds no artifact to list", dir.string()));
  std::vector<Entry> entries;
  entries.reserve(files.size());
  for (const auto& f : files) entries.push_back(Entry{f, artifact_sha256(dir / f)});
  const std::string manifest = render_manifest(entries);
  // The manifest first, then its signature: an interrupted run leaves a manifest that
  // fails verification rather than a signature over the old one that passes.
  licensing::write_file_atomic(dir / kManifestName, manifest, licensing::kPublicMode);
  licensing::write_file_atomic(dir / kSignatureName, render_signature(key, manifest),
                               licensing::kPublicMode);
  return Summary{entries.size(), key.public_key().key_id()};
}

Verification verify(const fs::path& dir, const licensing::PublicKey& key) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw gpulab::UsageError(fmt::format("'{}' is not a folder", dir.string()));
  const auto read = [&](std::string_view name, std::size_t cap) {
    auto r = gpulab::read_text_file((dir / name).string(), cap);
    if (!r.ok()) throw gpulab::RunError(fmt::format("{}: {}", name, r.error().message));
    return std::move(r).value();
  };
  const std::string manifest = read(kManifestName, kMaxManifestBytes);
  const std::string sig_text = read(kSignatureName, 4096);

  // "ed25519 <key id> <base64>\n", nothing else.
  const auto bad_sig = [](std::string_view why) {
    return gpulab::RunError(fmt::format("{}: {}", kSignatureName, why));
  };
  if (sig_text.empty() || sig_text.back() != '\n')
    throw bad_sig("expected one line 'ed25519 <key id> <signature>'");
  const auto first = sig_text.find(' ');
  const auto second = first == std::string::npos ? first : sig_text.find(' ', first + 1);
  if (second == std::string::npos || sig_text.substr(0, first) != "ed25519") {
    throw bad_sig("expected one line 'ed25519 <key id> <signature>'");
  }
  const std::string key_id = sig_text.substr(first + 1, second - first - 1);
  const auto signature = licensing::from_base64(
      std::string_view(sig_text).substr(second + 1, sig_text.size() - second - 2));
  if (!signature || signature->size() != 64)
    throw bad_sig("the signature is not 64 bytes of canonical base64");
  if (key_id != key.key_id()) {
    throw bad_sig(
        fmt::format("signed by key {}, but --public-key is key {}", key_id, key.key_id()));
  }
  if (!key.verify(signed_bytes(manifest), *signature)) {
    throw gpulab::RunError(
        fmt::format("{}: the signature of key {} does not match it (the manifest was changed "
                    "after signing)",
                    kManifestName, key.key_id()));
  }

  // The manifest is the signer's: a malformed one is a bad release, not bad input.
  std::vector<Entry> entries;
  try {
    entries = parse_manifest(manifest);
  } catch (const gpulab::UsageError& e) {
    throw gpulab::RunError(e.what());
  }
  Verification v;
  v.summary = Summary{entries.size(), key.key_id()};
  // A symbolic link or a device planted in a signed release is a failed verification (exit 1),
  // not bad usage.
  std::vector<std::string> present;
  try {
    present = list_artifacts(dir);
  } catch (const gpulab::UsageError& e) {
    throw gpulab::RunError(e.what());
  }
  const std::set<std::string, std::less<>> on_disk(present.begin(), present.end());
  std::set<std::string, std::less<>> listed;
  for (const auto& e : entries) {
    listed.insert(e.path);
    if (!on_disk.contains(e.path)) {
      v.problems.push_back({e.path, fmt::format("listed in {} but missing", kManifestName)});
      continue;
    }
    if (artifact_sha256(dir / e.path) != e.sha256) {
      v.problems.push_back(
          {e.path, fmt::format("SHA-256 differs from {} (changed after signing)", kManifestName)});
    }
  }
  for (const auto& f : present) {
    if (!listed.contains(f))
      v.problems.push_back({f, fmt::format("not listed in {}", kManifestName)});
  }
  return v;
}

}  // namespace platform::release
