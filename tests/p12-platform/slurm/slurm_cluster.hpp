// A one-node Slurm cluster of its own for the Slurm tests: munged, slurmctld
// and slurmd started by the test, with everything in a fresh temp directory —
// their own SLURM_CONF, munge key, munge socket, pid files, logs, spool and
// state — so /etc/slurm, /etc/munge and the system's munged are never read
// or touched. The node's GRES `gpu` are 4 device files the fixture makes
// (mknod of /dev/null's number: harmless to open), declared through
// `gpulabctl slurm gres-conf`, so the real slurmd is what accepts its output.
// SlurmctldPort and SlurmdPort are free loopback ports picked at start, so
// two test runs never share a cluster.
//
// Teardown (the destructor): scancel every job, wait for them to go, end the
// daemons' PID namespace, remove the directory. The namespace (unshare, a
// child with PR_SET_PDEATHSIG) also ends when the test process dies, so a
// test that crashes takes the daemons, slurmstepd and every rank along
// instead of leaving them behind.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpulab_test {

class SlurmCluster {
 public:
  static constexpr int kGpus = 4;
  static constexpr const char* kNode = "gpulab-n1";

  // Why this machine cannot run the cluster (not root, a program missing),
  // or nullopt.
  static std::optional<std::string> missing_prerequisites();

  // Starts everything and waits until the node is idle; throws
  // std::runtime_error with the daemons' last log lines when it does not
  // come up. `gpulabctl` renders gres.conf and the node line.
  explicit SlurmCluster(const std::filesystem::path& gpulabctl);
  ~SlurmCluster();
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  // The slurm.conf Slurm's commands must read (export it as SLURM_CONF).
  [[nodiscard]] const std::filesystem::path& conf() const { return conf_; }
  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  // A Slurm command with SLURM_CONF set: {exit code, stdout + stderr}.
  [[nodiscard]] std::pair<int, std::string> run(const std::vector<std::string>& argv) const;
  // The tail of every daemon's log, for a failure message.
  [[nodiscard]] std::string logs() const;

 private:
  void start(const std::filesystem::path& gpulabctl);
  pid_t spawn(const std::string& name, const std::vector<std::string>& argv);
  void stop();

  std::filesystem::path dir_;
  std::filesystem::path conf_;
  pid_t cluster_pid_ = -1;  // unshare: the PID namespace every daemon runs in
};

}  // namespace gpulab_test
