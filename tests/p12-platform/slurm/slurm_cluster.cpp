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

#include <chrono>
#include <fstream>
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

std::string short_hostname() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  std::string h(buf);
  return h.substr(0, h.find('.'));
}

}  // namespace

std::optional<std::string> SlurmCluster::missing_prerequisites() {
  if (::geteuid() != 0) return "not root (slurmd and munged run as root here)";
  for (const char* p : {"munged", "slurmctld", "slurmd", "sbatch", "srun", "squeue", "scancel",
                        "scontrol", "unshare", "bash"}) {
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

SlurmCluster::SlurmCluster(const std::filesystem::path& gpulabctl) {
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

void SlurmCluster::start(const std::filesystem::path& gpulabctl) {
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
  std::vector<std::string> gres_args{
      gpulabctl.string(), "slurm", "gres-conf", "--node", kNode, "--devices",
      "cpu_ref:" + std::to_string(kGpus), "--out", (dir_ / "conf").string(),
      // 8 CPUs declared on a 2-core machine (config_overrides): several small gangs at once.
      "--node-attrs", "NodeHostname=" + short_hostname() + " NodeAddr=127.0.0.1 CPUs=8"};
  for (int i = 0; i < kGpus; ++i) {
    const auto dev = dir_ / "dev" / ("gpu" + std::to_string(i));
    if (::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
      throw std::runtime_error("mknod " + dev.string());
    gres_args.push_back("--device-file");
    gres_args.push_back("cpu_ref:" + std::to_string(i) + "=" + dev.string());
  }
  const auto gres = platform::run_command(gres_args, "", 60s);
  if (gres.exit_code != 0)
    throw std::runtime_error("gpulabctl slurm gres-conf failed: " + gres.err);

  conf_ = dir_ / "conf" / "slurm.conf";
  const auto sock = (dir_ / "sock" / "munge.socket").string();
  std::ofstream(conf_)
      << "# gpulab's Slurm test cluster: one node, nothing outside " << dir_.string() << "\n"
      << "ClusterName=gpulab\n"
      << "SlurmctldHost=" << short_hostname() << "(127.0.0.1)\n"
      << "SlurmctldPort=" << free_loopback_port() << "\n"
      << "SlurmdPort=" << free_loopback_port() << "\n"
      << "AuthType=auth/munge\nCredType=cred/munge\n"
      << "AuthInfo=socket=" << sock << "\n"
      << "SlurmUser=root\nSlurmdUser=root\n"
      << "StateSaveLocation=" << (dir_ / "state").string() << "\n"
      << "SlurmdSpoolDir=" << (dir_ / "spool").string() << "\n"
      << "SlurmctldPidFile=" << (dir_ / "slurmctld.pid").string() << "\n"
      << "SlurmdPidFile=" << (dir_ / "slurmd.pid").string() << "\n"
      << "SlurmctldLogFile=" << (dir_ / "log" / "slurmctld.log").string() << "\n"
      << "SlurmdLogFile=" << (dir_ / "log" / "slurmd.log").string() << "\n"
      << "MailProg=/bin/true\n"
      // No cgroups: the tests must not depend on the host's hierarchy.
      << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
      << "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
      << "SchedulerType=sched/backfill\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
      << "MpiDefault=none\nReturnToService=2\n"
      << "SlurmdParameters=config_overrides\n"
      << "GresTypes=gpu\n"
      << "Include " << (dir_ / "conf" / "gpulab-nodes.conf").string() << "\n"
      << "PartitionName=gpulab Nodes=" << kNode << " Default=YES MaxTime=INFINITE State=UP\n";

  const auto sbin = [](const char* p) {
    return platform::find_on_path(p) ? std::string(p) : std::string("/usr/sbin/") + p;
  };
  const auto q = [](const std::filesystem::path& p) { return platform::shell_quote(p.string()); };
  const auto log = dir_ / "log";
  // The three daemons in a PID namespace of their own, whose init is this
  // script: when it ends (a daemon exited, teardown, or the test process
  // died and took unshare along through PR_SET_PDEATHSIG), the kernel kills
  // everything in the namespace — slurmstepd and the job's ranks included,
  // which a plain child's death signal would not reach (slurmd does not take
  // its steps with it). /proc is remounted so proctrack/linuxproc sees the
  // namespace's own pids.
  const std::string script =
      sbin("munged") + " --foreground --force --socket=" + platform::shell_quote(sock) +
      " --key-file=" + q(dir_ / "munge" / "munge.key") + " --log-file=" + q(log / "munged.log") +
      " --pid-file=" + q(dir_ / "munge" / "munged.pid") +
      " --seed-file=" + q(dir_ / "munge" / "munged.seed") + " 2> " + q(log / "munged.stderr") +
      " &\n" + "for i in $(seq 600); do [ -S " + platform::shell_quote(sock) +
      " ] && break; sleep 0.05; done\n" + sbin("slurmctld") + " -D -i > " +
      q(log / "slurmctld.stderr") + " 2>&1 &\n" + sbin("slurmd") + " -D -N " + kNode + " > " +
      q(log / "slurmd.stderr") + " 2>&1 &\n" +
      "wait -n\n"
      "echo 'a Slurm daemon exited: the test cluster stops' >&2\n";
  cluster_pid_ = spawn("cluster", {"unshare", "--pid", "--fork", "--mount-proc",
                                   "--kill-child=SIGKILL", "bash", "-c", script});
  // A daemon that exits (a config error) ends the wait at once; else up to
  // 90 s for a slow start on a loaded machine.
  bool exited = false;
  bool idle = false;
  platform::wait_until(
      [&] {
        if (::waitpid(cluster_pid_, nullptr, WNOHANG) == cluster_pid_) {
          exited = true;
          cluster_pid_ = -1;
          return true;
        }
        const auto [rc, out] = run({"sinfo", "-h", "-n", kNode, "-o", "%t"});
        idle = rc == 0 && out.rfind("idle", 0) == 0;
        return idle;
      },
      90s);
  if (!idle) {
    throw std::runtime_error(std::string("the Slurm node did not become idle:\n") +
                             (exited ? "a daemon exited\n" : "") +
                             run({"sinfo", "-N", "-l"}).second + logs());
  }
}

SlurmCluster::~SlurmCluster() {
  stop();
  std::error_code ec;
  if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
}

std::pair<int, std::string> SlurmCluster::run(const std::vector<std::string>& argv) const {
  const auto r = platform::run_command(argv, "", 60s, {{"SLURM_CONF", conf_.string()}});
  return {r.exit_code, r.out + r.err};
}

std::string SlurmCluster::logs() const {
  std::string out;
  for (const char* f :
       {"munged.stderr", "slurmctld.stderr", "slurmd.stderr", "slurmctld.log", "slurmd.log"}) {
    out += std::string("--- ") + f + "\n" + tail_of(dir_ / "log" / f, 15);
  }
  return out;
}

void SlurmCluster::stop() {
  if (cluster_pid_ < 0) return;
  // Every job ends before the daemons do, through Slurm; the namespace's end
  // below is the backstop for anything left.
  (void)run({"scancel", "--full", "--user=root"});
  platform::wait_until(
      [&] {
        const auto [rc, out] = run({"squeue", "-h", "-o", "%i"});
        return rc != 0 || out.find_first_not_of(" \n") == std::string::npos;
      },
      60s);
  ::kill(cluster_pid_, SIGTERM);  // unshare ends, its child (the namespace's init) gets SIGKILL
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {  // 10 s
    gone = ::waitpid(cluster_pid_, nullptr, WNOHANG) == cluster_pid_;
    if (!gone) std::this_thread::sleep_for(20ms);
  }
  if (!gone) {
    ::kill(cluster_pid_, SIGKILL);
    ::waitpid(cluster_pid_, nullptr, 0);
  }
  cluster_pid_ = -1;
}

}  // namespace gpulab_test
