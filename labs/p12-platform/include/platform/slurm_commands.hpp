// gpulabctl's `slurm` subcommands, which need no control plane:
// `slurm gres-conf` renders a node's gpulab inventory as Slurm's gres.conf and
// slurm.conf node line (slurm_gres_conf.hpp), printed or written to --out DIR
// (or each to a file of its own: --gres-conf-out, --nodes-out).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace platform {

class SlurmCommands {
 public:
  explicit SlurmCommands(CLI::App& app);
  // The exit code when a slurm subcommand was given, nullopt otherwise.
  [[nodiscard]] std::optional<int> run() const;

 private:
  CLI::App* slurm_ = nullptr;
  CLI::App* gres_conf_ = nullptr;
  std::string node_;
  std::string devices_ = "auto";
  std::vector<std::string> device_files_;
  std::string node_attrs_;
  std::string out_dir_;
  std::string gres_out_;   // --gres-conf-out FILE (default with --out: DIR/gres.conf)
  std::string nodes_out_;  // --nodes-out FILE (default with --out: DIR/gpulab-nodes.conf)
  bool json_ = false;
};

}  // namespace platform
