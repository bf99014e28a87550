// licensectl's key-rotation and revocation subcommands (vendor: rotate-key,
// revoke; site: keyring-init, keyring-rotate), kept out of the main.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "licensing/civil_date.hpp"

namespace licensing {

class TrustCommands {
 public:
  explicit TrustCommands(CLI::App& app);
  // The exit code of the subcommand given, or nullopt when none of these was.
  [[nodiscard]] std::optional<int> run(Date today) const;

 private:
  CLI::App* rotate_key_ = nullptr;
  CLI::App* revoke_ = nullptr;
  CLI::App* keyring_init_ = nullptr;
  CLI::App* keyring_rotate_ = nullptr;
  std::string key_file_, new_public_key_, valid_from_, retire_old_, out_, public_key_, rotation_file_, keyring_;
  std::uint64_t serial_ = 0;
  std::vector<std::string> licences_, key_ids_;
};

}  // namespace licensing
