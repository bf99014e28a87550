// gpulabctl's release subcommands: `release-manifest DIR --private-key KEY` signs a release
// folder, `verify-release DIR --public-key KEY` checks one (platform/release_manifest.hpp).
// They need no control plane; gpulabctl registers them and runs them before any API call.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace platform {

class ReleaseCommands {
 public:
  explicit ReleaseCommands(CLI::App& app);
  // The exit code when one of these subcommands was given, nullopt otherwise.
  [[nodiscard]] std::optional<int> run() const;

 private:
  CLI::App* manifest_ = nullptr;
  CLI::App* verify_ = nullptr;
  std::string dir_;
  std::string key_;
  bool json_ = false;
};

}  // namespace platform
