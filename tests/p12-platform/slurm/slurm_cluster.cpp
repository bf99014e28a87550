#include "slurm_cluster.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "gpulab_test/raw_tcp.hpp"
#include "platform/command.hpp"
#include "platform/local_cluster.hpp"
#include "platform/slurm_script.hpp"

namespace gpulab_test {
namespace {

using namespace std::chrono_literals;

std::string tail_of(const std::filesystem::path& p, std::size_t lines) {
  std::ifstream in(p);
  std::vector<std::string> all;
  for (std::string l; std::getline(in, l);) all.push_back(l);
  std::string out;
  for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i)
    out += all[i] + "\n";
  return out;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string short_hostname() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  std::string h(buf);
  return h.substr(0, h.find('.'));
}

std::string sbin(const char* p) {
  return platform::find_on_path(p) ? std::string(p) : std::string("/usr/sbin/") + p;
}

std::string q(const std::filesystem::path& p) { return platform::shell_quote(p.string()); }

}  // namespace

std::optional<std::string> SlurmCluster::missing_prerequisites() {
  if (::geteuid() != 0) return "not root (slurmd and munged run as root here)";
  for (const char* p : {"munged", "slurmctld", "slurmd", "sbatch", "srun", "squeue", "scancel",
                        "scontrol", "sinfo", "unshare", "nsenter", "bash"}) {
    if (!platform::find_on_path(p) && !platform::find_on_path(std::string("/usr/sbin/") + p)) {
      return std::string(p) + " not found (apt-get install slurm-wlm munge)";
    }
  }
  return std::nullopt;
}

pid_t SlurmCluster::spawn(const std::string& name, const std::vector<std::string>& argv) {
  const auto log = dir_ / "log" / (name + ".stderr");
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // the test dies, the daemon dies: none left behind
    if (::getppid() != parent) ::_exit(1);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, 0);
    ::setenv("SLURM_CONF", conf_.c_str(), 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

SlurmCluster::SlurmCluster(const std::filesystem::path& gpulabctl, SlurmLayout layout)
    : layout_(std::move(layout)) {
  if (!multi()) layout_.nodes = {kNode};
  if (layout_.nodes.empty()) throw std::runtime_error("SlurmLayout: no nodes");
  char tmpl[] = "/tmp/gpulab-slurm-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = tmpl;
  try {
    start(gpulabctl);
  } catch (...) {
    // A constructor that throws gets no destructor: clean up here.
    stop();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
    throw;
  }
}

void SlurmCluster::write_conf(const std::filesystem::path& gpulabctl) {
  // munged wants its key, pid and seed where only root reaches them, and the
  // socket's directory open to all (clients connect as any user).
  ::chmod(dir_.c_str(), 0755);
  for (const char* d : {"munge", "sock", "conf", "state", "spool", "log", "dev"})
    std::filesystem::create_directory(dir_ / d);
  ::chmod((dir_ / "munge").c_str(), 0700);
  {
    std::ifstream rnd("/dev/urandom", std::ios::binary);
    std::string key(1024, '\0');
    rnd.read(key.data(), static_cast<std::streamsize>(key.size()));
    std::ofstream(dir_ / "munge" / "munge.key", std::ios::binary) << key;
    ::chmod((dir_ / "munge" / "munge.key").c_str(), 0400);
  }

  // Each node's devices and lines from gpulabctl; Slurm reads one gres.conf
  // (beside slurm.conf) whose NodeName= lines say which node each is for.
  const int gpus = multi() ? layout_.gpus_per_node : kGpus;
  std::string gres_conf;
  for (const auto& node : layout_.nodes) {
    std::filesystem::create_directory(dir_ / "spool" / node);  // slurmd does not create it
    // 8 CPUs declared on a 2-core machine (config_overrides): several small gangs at once.
    const std::string attrs = multi() ? "NodeHostname=" + node + " NodeAddr=" + layout_.hosts->ip(node) + " CPUs=8"
                                      : "NodeHostname=" + short_hostname() + " NodeAddr=127.0.0.1 CPUs=8";
    std::vector<std::string> args{gpulabctl.string(),
                                  "slurm",
                                  "gres-conf",
                                  "--node",
                                  node,
                                  "--devices",
                                  "cpu_ref:" + std::to_string(gpus),
                                  "--gres-conf-out",
                                  (dir_ / "conf" / ("gres-" + node + ".conf")).string(),
                                  "--nodes-out",
                                  (dir_ / "conf" / ("node-" + node + ".conf")).string(),
                                  "--node-attrs",
                                  attrs};
    for (int i = 0; i < gpus; ++i) {
      const auto dev = dir_ / "dev" / (node + "-gpu" + std::to_string(i));
      if (::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
        throw std::runtime_error("mknod " + dev.string());
      args.push_back("--device-file");
      args.push_back("cpu_ref:" + std::to_string(i) + "=" + dev.string());
    }
    const auto r = platform::run_command(args, "", 60s);
    if (r.exit_code != 0) throw std::runtime_error("gpulabctl slurm gres-conf failed: " + r.err);
    gres_conf += slurp(dir_ / "conf" / ("gres-" + node + ".conf"));
  }
  std::ofstream(dir_ / "conf" / "gres.conf") << gres_conf;

  conf_ = dir_ / "conf" / "slurm.conf";
  std::ofstream c(conf_);
  c << "# gpulab's Slurm test cluster: " << layout_.nodes.size() << " node(s), nothing outside "
    << dir_.string() << "\n"
    << "ClusterName=gpulab\n";
  if (multi()) {
    // Each host has its own network: Slurm's default ports are free on all.
    c << "SlurmctldHost=" << layout_.controller << "(" << layout_.hosts->ip(layout_.controller) << ")\n"
      // Slurm declares a node that stops answering DOWN after this (its
      // default, 300 s, is longer than a test should wait).
      << "SlurmdTimeout=10\n";
  } else {
    c << "SlurmctldHost=" << short_hostname() << "(127.0.0.1)\n"
      << "SlurmctldPort=" << free_loopback_port() << "\n"
      << "SlurmdPort=" << free_loopback_port() << "\n";
  }
  c << "AuthType=auth/munge\nCredType=cred/munge\n"
    << "AuthInfo=socket=" << (dir_ / "sock" / "munge.socket").string() << "\n"
    << "SlurmUser=root\nSlurmdUser=root\n"
    << "StateSaveLocation=" << (dir_ / "state").string() << "\n"
    // %n: the node's name, so several slurmd on one file system keep apart.
    << "SlurmdSpoolDir=" << (dir_ / "spool" / "%n").string() << "\n"
    << "SlurmctldPidFile=" << (dir_ / "slurmctld.pid").string() << "\n"
    << "SlurmdPidFile=" << (dir_ / "slurmd-%n.pid").string() << "\n"
    << "SlurmctldLogFile=" << (dir_ / "log" / "slurmctld.log").string() << "\n"
    << "SlurmdLogFile=" << (dir_ / "log" / "slurmd-%n.log").string() << "\n"
    << "MailProg=/bin/true\n"
    // No cgroups: the tests must not depend on the host's hierarchy.
    << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
    << "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
    << "SchedulerType=sched/backfill\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
    << "MpiDefault=none\nReturnToService=2\n"
    << "SlurmdParameters=config_overrides\n"
    << "GresTypes=gpu\n";
  std::string node_list;
  for (const auto& node : layout_.nodes) {
    c << "Include " << (dir_ / "conf" / ("node-" + node + ".conf")).string() << "\n";
    node_list += (node_list.empty() ? "" : ",") + node;
  }
  c << "PartitionName=gpulab Nodes=" << node_list << " Default=YES MaxTime=INFINITE State=UP\n";
}

// One node's slurmd as a line of the namespace's init script: in the node's
// network and a UTS namespace named after it (several-node layout), its
// output to log/slurmd-<node>.stderr, and a file log/slurmd-<node>.exited
// once it ends, so a start that fails is seen at once.
std::string SlurmCluster::slurmd_line(const std::string& node) const {
  const auto log = dir_ / "log";
  const std::string slurmd = sbin("slurmd") + " -D -N " + node;
  const std::string launch =
      multi() ? "nsenter --net=/run/netns/" + layout_.hosts->netns(node) + " unshare --uts sh -c " +
                    platform::shell_quote("hostname " + node + " && exec " + slurmd)
              : slurmd;
  return "{ " + launch + " > " + q(log / ("slurmd-" + node + ".stderr")) +
         " 2>&1; echo \"slurmd exited: $?\" > " + q(log / ("slurmd-" + node + ".exited")) + "; }";
}

void SlurmCluster::start(const std::filesystem::path& gpulabctl) {
  write_conf(gpulabctl);
  const auto log = dir_ / "log";
  const auto sock = (dir_ / "sock" / "munge.socket").string();
  const std::string ctld = sbin("slurmctld") + " -D -i";
  // The daemons in a PID namespace of their own, whose init is this script:
  // when munged or slurmctld exits (a config error, teardown, or the test
  // process died and took unshare along through PR_SET_PDEATHSIG), it ends
  // and the kernel kills everything in the namespace — slurmd, slurmstepd
  // and the job's ranks included, which a plain child's death signal would
  // not reach (slurmd does not take its steps with it). A slurmd may end (a
  // test kills one) without ending the cluster. /proc is remounted so
  // proctrack/linuxproc sees the namespace's own pids.
  std::string script =
      sbin("munged") + " --foreground --force --socket=" + platform::shell_quote(sock) +
      " --key-file=" + q(dir_ / "munge" / "munge.key") + " --log-file=" + q(log / "munged.log") +
      " --pid-file=" + q(dir_ / "munge" / "munged.pid") +
      " --seed-file=" + q(dir_ / "munge" / "munged.seed") + " 2> " + q(log / "munged.stderr") +
      " &\nm=$!\n" + "for i in $(seq 600); do [ -S " + platform::shell_quote(sock) +
      " ] && break; sleep 0.05; done\n" +
      (multi() ? "nsenter --net=/run/netns/" + layout_.hosts->netns(layout_.controller) +
                     " unshare --uts sh -c " +
                     platform::shell_quote("hostname " + layout_.controller + " && exec " + ctld)
               : ctld) +
      " > " + q(log / "slurmctld.stderr") + " 2>&1 &\nc=$!\n";
  for (const auto& node : layout_.nodes) script += slurmd_line(node) + " &\n";
  script +=
      "wait -n $m $c\n"
      "echo 'munged or slurmctld exited: the test cluster stops' >&2\n";
  cluster_pid_ = spawn("cluster", {"unshare", "--pid", "--fork", "--mount-proc",
                                   "--kill-child=SIGKILL", "bash", "-c", script});
  // A daemon that exits (a config error) ends the wait at once; else up to
  // 90 s for a slow start on a loaded machine.
  std::string why;
  const bool idle = platform::wait_until(
      [&] {
        if (::waitpid(cluster_pid_, nullptr, WNOHANG) == cluster_pid_) {
          cluster_pid_ = -1;
          why = "munged or slurmctld exited\n";
          return true;
        }
        for (const auto& node : layout_.nodes) {
          if (std::filesystem::exists(log / ("slurmd-" + node + ".exited"))) {
            why = "the slurmd of " + node + " exited\n";
            return true;
          }
        }
        return std::all_of(layout_.nodes.begin(), layout_.nodes.end(),
                           [&](const std::string& n) { return node_state(n) == "idle"; });
      },
      90s);
  if (!idle || !why.empty()) {
    throw std::runtime_error("the Slurm nodes did not become idle:\n" + why +
                             run({"sinfo", "-N", "-l"}).second + logs());
  }
}

SlurmCluster::~SlurmCluster() {
  stop();
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

std::pair<int, std::string> SlurmCluster::run(const std::vector<std::string>& argv) const {
  std::vector<std::string> cmd;
  if (multi()) cmd = {"nsenter", "--net=/run/netns/" + layout_.hosts->netns(layout_.controller)};
  cmd.insert(cmd.end(), argv.begin(), argv.end());
  const auto r = platform::run_command(cmd, "", 60s, {{"SLURM_CONF", conf_.string()}});
  return {r.exit_code, r.out + r.err};
}

std::string SlurmCluster::node_state(const std::string& node) const {
  const auto [rc, out] = run({"sinfo", "-h", "-n", node, "-o", "%t"});
  if (rc != 0) return "(sinfo failed: " + out + ")";
  return out.substr(0, out.find_first_of(" \n"));
}

bool SlurmCluster::left_queue(const std::string& slurm_id, std::chrono::milliseconds timeout) const {
  return platform::wait_until(
      [&] {
        const auto [rc, q] = run({"squeue", "-h", "-j", slurm_id, "-o", "%i"});
        return rc == 0 && q.find(slurm_id) == std::string::npos;
      },
      timeout);
}

std::string SlurmCluster::logs() const {
  std::set<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir_ / "log", ec)) files.insert(e.path());
  std::string out;
  for (const auto& f : files) out += "--- " + f.filename().string() + "\n" + tail_of(f, 15);
  return out;
}

int SlurmCluster::kill_slurmd(const std::string& node) {
  if (!multi()) throw std::runtime_error("kill_slurmd needs the several-node layout");
  // Every process in the node's network namespace is the node's: its
  // slurmd, and the slurmstepd and ranks of its jobs.
  const auto pids = shell_or_throw("ip netns pids " + layout_.hosts->netns(node));
  int killed = 0;
  int left = 0;
  std::istringstream in(pids);
  for (pid_t pid = 0; in >> pid;) {
    std::string comm = slurp("/proc/" + std::to_string(pid) + "/comm");
    comm = comm.substr(0, comm.find('\n'));
    if (comm == "slurmd") {
      ::kill(pid, SIGKILL);
      ++killed;
    } else {
      ++left;
    }
  }
  if (killed != 1) throw std::runtime_error(node + ": found " + std::to_string(killed) + " slurmd, not 1");
  return left;
}

void SlurmCluster::start_slurmd(const std::string& node) {
  if (!multi() || cluster_pid_ < 0) throw std::runtime_error("start_slurmd needs a running several-node cluster");
  // The namespace's init is unshare's one child.
  const auto children = slurp("/proc/" + std::to_string(cluster_pid_) + "/task/" +
                              std::to_string(cluster_pid_) + "/children");
  const std::string init = children.substr(0, children.find(' '));
  if (init.empty()) throw std::runtime_error("the cluster's PID namespace has no init");
  std::filesystem::remove(dir_ / "log" / ("slurmd-" + node + ".exited"));
  restarted_.push_back(spawn("restart-" + node, {"nsenter", "--target", init, "--pid", "--mount", "bash",
                                                 "-c", slurmd_line(node)}));
}

void SlurmCluster::stop() {
  if (cluster_pid_ >= 0) {
    // Every job ends before the daemons do, through Slurm; the namespace's end
    // below is the backstop for anything left (a job on a dead node).
    (void)run({"scancel", "--full", "--user=root"});
    platform::wait_until(
        [&] {
          const auto [rc, out] = run({"squeue", "-h", "-o", "%i"});
          return rc != 0 || out.find_first_not_of(" \n") == std::string::npos;
        },
        60s);
    // SIGKILL, not SIGTERM: unshare --fork blocks SIGTERM while it waits for
    // its child. Its death kills that child (--kill-child), the namespace's
    // init, and with it every process of the namespace.
    ::kill(cluster_pid_, SIGKILL);
    ::waitpid(cluster_pid_, nullptr, 0);
    cluster_pid_ = -1;
  }
  for (const pid_t p : restarted_) ::waitpid(p, nullptr, 0);  // their slurmd died with the namespace
  restarted_.clear();
}

}  // namespace gpulab_test
