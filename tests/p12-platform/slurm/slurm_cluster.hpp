// A Slurm cluster of its own for the Slurm tests: munged, slurmctld and one
// slurmd per node started by the test, with everything in a fresh temp
// directory — their own SLURM_CONF, munge key, munge socket, pid files, logs,
// spool and state — so /etc/slurm, /etc/munge and the system's munged are
// never read or touched. Each node's GRES `gpu` are device files the fixture
// makes (mknod of /dev/null's number: harmless to open), declared through
// `gpulabctl slurm gres-conf`, so the real slurmd is what accepts its output.
//
// Two layouts:
//  - one node (the default constructor): slurmctld and slurmd on this
//    machine's own network, loopback, SlurmctldPort and SlurmdPort free
//    loopback ports picked at start so two test runs never share a cluster;
//  - several nodes (SlurmLayout with NetnsHosts): slurmctld on one host and
//    each slurmd on its own, every host a network namespace with its own veth
//    address on a bridge (netns_hosts.hpp), each slurmd also in a UTS
//    namespace with the node's name as its hostname. Paths that differ per
//    node go through slurm.conf's %n (spool, log, pid file). Slurm's traffic,
//    and the ranks' ring, cross the veths; the file system (state, munge
//    socket, gpulab-task) is the machine's, shared as a cluster's would be.
//
// Debian's Slurm 22.05 is built with MULTIPLE_SLURMD (scontrol show config),
// so several slurmd on one host also run with a Port= per node; the
// namespaces are there so each node has an address of its own and the
// all-reduce really leaves a host.
//
// Teardown (the destructor): scancel every job, wait for them to go, end the
// daemons' PID namespace, remove the directory. The namespace (unshare, a
// child with PR_SET_PDEATHSIG) also ends when the test process dies, so a
// test that crashes takes the daemons, slurmstepd and every rank along
// instead of leaving them behind.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpulab_test/netns_hosts.hpp"

namespace gpulab_test {

struct SlurmLayout {
  const NetnsHosts* hosts = nullptr;  // null: one node on this machine's own network
  std::string controller;             // the host slurmctld runs on
  std::vector<std::string> nodes;     // one slurmd on each of these hosts, named as the host
  int gpus_per_node = 4;
};

class SlurmCluster {
 public:
  static constexpr int kGpus = 4;
  static constexpr const char* kNode = "gpulab-n1";  // the one-node layout's node

  // Why this machine cannot run the cluster (not root, a program missing),
  // or nullopt.
  static std::optional<std::string> missing_prerequisites();

  // Starts everything and waits until every node is idle; throws
  // std::runtime_error with the daemons' last log lines when it does not
  // come up. `gpulabctl` renders gres.conf and the node lines.
  explicit SlurmCluster(const std::filesystem::path& gpulabctl) : SlurmCluster(gpulabctl, {}) {}
  SlurmCluster(const std::filesystem::path& gpulabctl, SlurmLayout layout);
  ~SlurmCluster();
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  // The slurm.conf Slurm's commands must read (export it as SLURM_CONF).
  [[nodiscard]] const std::filesystem::path& conf() const { return conf_; }
  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  [[nodiscard]] const std::vector<std::string>& nodes() const { return layout_.nodes; }
  // A Slurm command with SLURM_CONF set, where slurmctld is reachable (in
  // the controller's namespace): {exit code, stdout + stderr}.
  [[nodiscard]] std::pair<int, std::string> run(const std::vector<std::string>& argv) const;
  // sinfo's compact state of one node: "idle", "mix", "alloc", "down*", ...
  [[nodiscard]] std::string node_state(const std::string& node) const;
  // Waits up to `timeout` for squeue to stop listing the job (slurmctld has ended it and its
  // ranks are gone); false when it is still listed.
  [[nodiscard]] bool left_queue(const std::string& slurm_id, std::chrono::milliseconds timeout) const;
  // The tail of every daemon's log, for a failure message.
  [[nodiscard]] std::string logs() const;

  // Several-node layout only. SIGKILL the node's slurmd and nothing else
  // (its slurmstepd and ranks run on, as on a real node whose daemon died);
  // returns how many processes were left in the node's namespace.
  int kill_slurmd(const std::string& node);
  // Starts the node's slurmd again (in the cluster's PID namespace); with
  // ReturnToService=2 slurmctld takes the node back once it registers.
  void start_slurmd(const std::string& node);

 private:
  void start(const std::filesystem::path& gpulabctl);
  void write_conf(const std::filesystem::path& gpulabctl);
  pid_t spawn(const std::string& name, const std::vector<std::string>& argv);
  [[nodiscard]] std::string slurmd_line(const std::string& node) const;
  [[nodiscard]] bool multi() const { return layout_.hosts != nullptr; }
  void stop();

  SlurmLayout layout_;
  std::filesystem::path dir_;
  std::filesystem::path conf_;
  pid_t cluster_pid_ = -1;        // unshare: the PID namespace every daemon runs in
  std::vector<pid_t> restarted_;  // nsenter of each start_slurmd, reaped at stop
};

}  // namespace gpulab_test
