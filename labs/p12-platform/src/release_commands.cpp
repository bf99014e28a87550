#include "platform/release_commands.hpp"

#include <fmt/format.h>

#include "gpulab/cli.hpp"
#include "gpulab/json.hpp"
#include "gpulab/version.hpp"
#include "platform/release_manifest.hpp"

namespace platform {

ReleaseCommands::ReleaseCommands(CLI::App& app) {
  manifest_ = app.add_subcommand("release-manifest",
                                 "Write DIR/SHA256SUMS (SHA-256 of every file under DIR) and "
                                 "DIR/SHA256SUMS.sig (its Ed25519 signature).");
  manifest_->add_option("dir", dir_, "Release folder")->required();
  manifest_
      ->add_option("--private-key", key_,
                   "Ed25519 private key, PEM (licensectl keygen --out PREFIX writes PREFIX.key)")
      ->required();
  verify_ = app.add_subcommand("verify-release",
                               "Check DIR/SHA256SUMS.sig against the key, then every file under "
                               "DIR against SHA256SUMS: exit 0 only "
                               "when nothing was changed, removed or added.");
  verify_->add_option("dir", dir_, "Release folder")->required();
  verify_
      ->add_option("--public-key", key_,
                   "Ed25519 public key, PEM (PREFIX.pub from licensectl keygen)")
      ->required();
  for (auto* sub : {manifest_, verify_})
    sub->add_flag("--json", json_, "Print the result as one JSON document");
}

std::optional<int> ReleaseCommands::run() const {
  if (manifest_->parsed()) {
    const auto s = release::write_manifest(dir_, licensing::PrivateKey::load(key_));
    if (json_) {
      gpulab::print_json(gpulab::Json{{"dir", dir_},
                                      {"artifacts", s.artifacts},
                                      {"key_id", s.key_id},
                                      {"version", gpulab::version()}});
    } else {
      fmt::print("wrote {0}/{1} ({2} artifacts) and {0}/{3}, signed by key {4}\n", dir_,
                 release::kManifestName, s.artifacts, release::kSignatureName, s.key_id);
    }
    return gpulab::kExitOk;
  }
  if (verify_->parsed()) {
    const auto v = release::verify(dir_, licensing::PublicKey::load(key_));
    if (json_) {
      gpulab::Json problems = gpulab::Json::array();
      for (const auto& p : v.problems)
        problems.push_back(gpulab::Json{{"path", p.path}, {"problem", p.what}});
      gpulab::print_json(gpulab::Json{{"dir", dir_},
                                      {"ok", v.problems.empty()},
                                      {"artifacts", v.summary.artifacts},
                                      {"key_id", v.summary.key_id},
                                      {"problems", problems}});
    } else {
      for (const auto& p : v.problems) fmt::print("FAIL {}/{}: {}\n", dir_, p.path, p.what);
      if (v.problems.empty()) {
        fmt::print("PASS {}: {} artifacts match {}, signed by key {}\n", dir_, v.summary.artifacts,
                   release::kManifestName, v.summary.key_id);
      }
    }
    return v.problems.empty() ? gpulab::kExitOk : gpulab::kExitCheckFailed;
  }
  return std::nullopt;
}

}  // namespace platform
