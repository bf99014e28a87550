// Tasks in mininer containers (issue #17, part 4): what a containerised task
// sees (PID 1, its hostname, only its device, a read-only userland), that its
// cgroup goes when it exits, that a SIGKILLed agent takes its containers along
// and the next agent start removes their groups, that matmul and a 2-rank
// train give the same results as plain processes, and that an agent without a
// cgroup hierarchy falls back to processes (or refuses --isolation container)
// with the reason. Skips only when this host cannot run containers at all.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "licensing/signed_licence.hpp"
#include "mininer/cgroup.hpp"
#include "mininer/sys.hpp"
#include "platform/api_client.hpp"
#include "platform/local_cluster.hpp"
#include "platform/task_container.hpp"
#include "serving/completion_client.hpp"

namespace {

using gpulab::Json;
using namespace platform;
using namespace std::chrono_literals;

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The value after "KEY " on a line of `log`, or "".
std::string field(const std::string& log, const std::string& key) {
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + " ", 0) == 0) return line.substr(key.size() + 1);
  }
  return "";
}

// Where the task's device rules live on the host, from its own /proc/self/cgroup.
// `proc_cgroup` is the file's lines joined with ';' (one log line).
std::string host_cgroup_dir(std::string proc_cgroup) {
  std::replace(proc_cgroup.begin(), proc_cgroup.end(), ';', '\n');
  const auto mounts = mininer::parse_mountinfo(mininer::read_file("/proc/self/mountinfo").value_or(""));
  const auto member = mininer::parse_proc_cgroup(proc_cgroup);
  if (mounts.v1.count("devices") != 0 && member.v1.count("devices") != 0) {
    return mounts.v1.at("devices") + member.v1.at("devices");
  }
  return mounts.unified + member.unified;
}

bool process_gone(const std::string& pid) {
  const auto stat = mininer::read_file("/proc/" + pid + "/stat");
  if (!stat) return true;
  const auto close = stat->rfind(')');
  return close != std::string::npos && close + 2 < stat->size() && (*stat)[close + 2] == 'Z';
}

class ContainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const auto missing = container_prerequisites_missing()) GTEST_SKIP() << "no containers here: " << *missing;
    char tmpl[] = "/tmp/gpulab-container-it-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    ::chmod(dir_.c_str(), 0755);
    cluster_ = std::make_unique<LocalCluster>(GPULAB_BIN_DIR, dir_ / "cluster");
  }
  void TearDown() override {
    if (std::filesystem::exists(release_file())) std::ofstream(release_file()) << "";
    cluster_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  void start_control() {
    cluster_->start_control({"--node-timeout-ms", "1500"});
    api_ = std::make_unique<ApiClient>(cluster_->control_url());
  }
  void start_agent(const std::string& name, const std::string& devices, std::vector<std::string> extra) {
    extra.insert(extra.end(), {"--heartbeat-ms", "200", "--no-certify"});
    cluster_->start_agent(name, devices, extra);
  }
  void wait_nodes(std::size_t n) {
    ASSERT_TRUE(wait_until([&] { return api_->get("/v1/nodes").size() == n; }, 20s));
  }

  std::filesystem::path release_file() const { return dir_ / "probe" / "release"; }

  // Fake GPU nodes: device numbers of harmless kernel devices (tun, fuse),
  // neither in the standard set every container gets, both opened without a
  // capability (a confined task lacks CAP_SYSLOG, which /dev/kmsg would need).
  void make_nodes() {
    ASSERT_EQ(::mknod((dir_ / "gpu0").c_str(), S_IFCHR | 0600, makedev(10, 200)), 0);
    ASSERT_EQ(::mknod((dir_ / "gpu1").c_str(), S_IFCHR | 0600, makedev(10, 229)), 0);
  }

  // A task program that reports what it sees, then waits for the test.
  std::string write_probe() {
    std::filesystem::create_directories(dir_ / "probe");
    const auto path = dir_ / "probe" / "probe.sh";
    std::ofstream(path) << "#!/bin/sh\n"
                           "echo \"pid $$\"\n"
                           "echo \"hostname $(hostname)\"\n"
                           "echo \"caps $(grep CapEff /proc/self/status | cut -f2)\"\n"
                           "echo \"seccomp $(grep Seccomp: /proc/self/status | cut -f2)\"\n"
                           "echo \"devices $(ls /dev | grep gpu | tr '\\n' ' ')\"\n"
                           "for d in /dev/gpu*; do if true < $d; then echo \"open $d ok\"; fi; done 2>&1\n"
                           "if mknod /tmp/n0 c 10 200 2>/tmp/e0; then echo 'mknod 10:200 ok'; else echo \"mknod 10:200 $(cat /tmp/e0)\"; fi\n"
                           "if mknod /tmp/n1 c 10 229 2>/tmp/e1; then echo 'mknod 10:229 ok'; else echo \"mknod 10:229 $(cat /tmp/e1)\"; fi\n"
                           "if touch /usr/gpulab-probe 2>/dev/null; then echo 'usr writable'; else echo 'usr read-only'; fi\n"
                           "if [ -e " + (dir_ / "cluster").string() + " ]; then echo 'state visible'; else echo 'state hidden'; fi\n"
                           "echo \"cgroup $(tr '\\n' ';' < /proc/self/cgroup)\"\n"
                           "echo ready\n"
                           "while [ ! -e " + release_file().string() + " ]; do sleep 0.05; done\n";
    std::filesystem::permissions(path, std::filesystem::perms::owner_all | std::filesystem::perms::group_read |
                                           std::filesystem::perms::group_exec | std::filesystem::perms::others_read |
                                           std::filesystem::perms::others_exec);
    return path.string();
  }

  std::string submit_matmul(const std::string& backend = "cpu_ref") {
    const Json spec{{"name", "m"}, {"kind", "matmul"}, {"backend", backend}, {"params", Json{{"n", 48}, {"chain", 3}}}};
    return api_->post("/v1/jobs", spec.dump()).at("id").get<std::string>();
  }
  // The one node reports process isolation, and a matmul job succeeds there as a plain process.
  void expect_one_node_runs_matmul_as_a_plain_process() {
    wait_nodes(1);
    EXPECT_EQ(api_->get("/v1/nodes").at(0).at("isolation"), "process");
    const auto id = submit_matmul();
    const auto j = wait_for_job(*api_, id, {"succeeded", "failed"}, 60s);
    ASSERT_EQ(j.at("state"), "succeeded") << j.dump();
    EXPECT_EQ(j.at("tasks").at(0).at("isolation"), "process");
  }
  std::string submit_train() {
    const Json spec{{"name", "t"},       {"kind", "train"}, {"gpus", 2}, {"backend", "cpu_ref"},
                    {"params", Json{{"steps", 6}, {"seed", 7}, {"checkpoint_every", 2}}}};
    return api_->post("/v1/jobs", spec.dump()).at("id").get<std::string>();
  }

  // The log of the job's first task as the agent writes it, once it says `ready`.
  std::string wait_ready_log(const std::string& agent, const std::string& job) {
    std::string log;
    std::string task;
    EXPECT_TRUE(wait_until(
        [&] {
          const auto j = api_->get("/v1/jobs/" + job);
          if (j.at("tasks").empty()) return false;
          task = j.at("tasks").at(0).at("id").get<std::string>();
          log = slurp(dir_ / "cluster" / ("agent-" + agent) / (task + ".log"));
          return log.find("\nready\n") != std::string::npos;
        },
        30s))
        << "task " << task << " log:\n"
        << log;
    return log;
  }

  std::filesystem::path dir_;
  std::unique_ptr<LocalCluster> cluster_;
  std::unique_ptr<ApiClient> api_;
};

TEST_F(ContainerTest, ATaskIsPid1SeesOnlyItsDeviceAndItsCgroupGoesWhenItExits) {
  make_nodes();
  const auto probe = write_probe();
  start_control();
  start_agent("box", "cpu_ref:2",
              {"--isolation", "container", "--task-program", probe, "--device-node",
               "cpu_ref:0=" + (dir_ / "gpu0").string(), "--device-node", "cpu_ref:1=" + (dir_ / "gpu1").string()});
  wait_nodes(1);
  EXPECT_EQ(api_->get("/v1/nodes").at(0).at("isolation"), "container");

  const auto id = submit_matmul();
  const auto log = wait_ready_log("box", id);
  const auto job = api_->get("/v1/jobs/" + id);
  const std::string device = job.at("placement").at(0).at("device");
  const bool first = device == "cpu_ref:0";
  const std::string mine = first ? "gpu0" : "gpu1";
  const std::string theirs_rule = first ? "10:229" : "10:200";
  const std::string mine_rule = first ? "10:200" : "10:229";

  EXPECT_EQ(field(log, "pid"), "1") << log;
  EXPECT_EQ(field(log, "hostname"), job.at("tasks").at(0).at("id").get<std::string>()) << log;
  EXPECT_EQ(field(log, "devices"), mine + " ") << log;  // only the assigned node is in its /dev
  // Root, confined: Docker's default capabilities and mininer's seccomp filter.
  EXPECT_EQ(field(log, "caps"), "00000000a80425fb") << log;
  EXPECT_EQ(field(log, "seccomp"), "2") << log;
  EXPECT_EQ(field(log, "open"), "/dev/" + mine + " ok") << log;
  // Root inside may mknod, but the device cgroup admits only the assigned device.
  EXPECT_EQ(field(log, "mknod " + mine_rule), "ok") << log;
  EXPECT_NE(field(log, "mknod " + theirs_rule).find("Operation not permitted"), std::string::npos) << log;
  EXPECT_NE(log.find("usr read-only"), std::string::npos) << log;
  EXPECT_NE(log.find("state hidden"), std::string::npos) << log;

  const std::string group = host_cgroup_dir(field(log, "cgroup"));
  ASSERT_NE(group.find("mininer-"), std::string::npos) << log;
  EXPECT_TRUE(std::filesystem::is_directory(group)) << group;

  std::ofstream(release_file()) << "";
  const auto done = wait_for_job(*api_, id, {"succeeded", "failed"}, 30s);
  ASSERT_EQ(done.at("state"), "succeeded") << done.dump();
  EXPECT_EQ(done.at("tasks").at(0).at("isolation"), "container");
  EXPECT_EQ(done.at("tasks").at(0).at("device_nodes"), Json::array({(dir_ / mine).string()})) << done.dump();
  EXPECT_FALSE(std::filesystem::exists(group)) << group << " outlived its task";
}

TEST_F(ContainerTest, AKilledAgentTakesItsContainersAlongAndTheNextStartRemovesTheirCgroups) {
  const auto probe = write_probe();
  start_control();
  const std::vector<std::string> flags{"--isolation", "container", "--task-program", probe};
  start_agent("box", "cpu_ref:1", flags);
  wait_nodes(1);
  const auto id = submit_matmul();
  const auto log = wait_ready_log("box", id);
  // "mininer: container j-000001.1.0: pid 4242 on the host, pid 1 inside, ..."
  const auto at = log.find(": pid ");
  ASSERT_NE(at, std::string::npos) << log;
  const std::string host_pid = log.substr(at + 6, log.find(' ', at + 6) - at - 6);
  const std::string group = host_cgroup_dir(field(log, "cgroup"));
  ASSERT_FALSE(process_gone(host_pid)) << log;

  cluster_->kill9("box");
  EXPECT_TRUE(wait_until([&] { return process_gone(host_pid); }, 20s)) << "task pid " << host_pid << " outlived its agent";
  EXPECT_TRUE(wait_until([&] { return mininer::read_file(group + "/cgroup.procs").value_or("").empty(); }, 20s))
      << "processes left in " << group;

  // The group may be gone already (any mininer run in this cgroup sweeps
  // leftovers); the next agent start must leave it gone in any case.
  start_agent("box", "cpu_ref:1", flags);
  EXPECT_FALSE(std::filesystem::exists(group)) << group << " survived the agent's restart";
}

TEST_F(ContainerTest, MatmulAndTrainingGiveTheSameResultsInContainersAsInProcesses) {
  start_control();
  const auto run = [&](const std::string& isolation) {
    const auto m = submit_matmul();
    const auto t = submit_train();
    const auto mj = wait_for_job(*api_, m, {"succeeded", "failed"}, 120s);
    const auto tj = wait_for_job(*api_, t, {"succeeded", "failed"}, 120s);
    EXPECT_EQ(mj.at("state"), "succeeded") << mj.dump();
    EXPECT_EQ(tj.at("state"), "succeeded") << tj.dump();
    for (const auto& j : {mj, tj}) {
      for (const auto& task : j.at("tasks")) {
        EXPECT_EQ(task.at("isolation"), isolation) << j.dump();
        EXPECT_TRUE(task.at("device_nodes").empty()) << "cpu_ref has no device node: " << j.dump();
      }
    }
    return std::make_pair(mj.at("result"), tj.at("result"));
  };
  start_agent("box", "cpu_ref:2", {"--isolation", "container"});
  wait_nodes(1);
  const auto [box_m, box_t] = run("container");
  // The same jobs on a plain-process agent, the container agent drained.
  start_agent("plain", "cpu_ref:2", {"--isolation", "process"});
  wait_nodes(2);
  api_->post("/v1/nodes/box/drain", "{}");
  const auto [plain_m, plain_t] = run("process");

  EXPECT_TRUE(box_m.at("pass").get<bool>());
  EXPECT_EQ(box_m.at("worst_error_ratio"), plain_m.at("worst_error_ratio"));
  for (const char* k : {"first_loss", "final_loss", "weights_checksum", "allreduce_bytes", "steps"}) {
    EXPECT_EQ(box_t.at(k), plain_t.at(k)) << k;
  }
  EXPECT_LT(box_t.at("final_loss").get<double>(), box_t.at("first_loss").get<double>());
  std::printf("container: matmul worst error %.4g, train loss %.4f -> %.4f (%s); process: the same\n",
              box_m.at("worst_error_ratio").get<double>(), box_t.at("first_loss").get<double>(),
              box_t.at("final_loss").get<double>(), box_t.at("weights_checksum").get<std::string>().c_str());
}

TEST_F(ContainerTest, AServeJobsServerRunsInAContainerAndAnswersOnTheAgentsAddress) {
  // A licence with serving (signed here with a fresh vendor key).
  const licensing::SignedLicenceFiles lic =
      licensing::issue_signed_licence(dir_, "lab", "serving", 4);
  cluster_->start_control(
      {"--node-timeout-ms", "1500", "--license", lic.licence, "--public-key", lic.public_key});
  api_ = std::make_unique<ApiClient>(cluster_->control_url());
  start_agent("box", "cpu_ref:1", {"--isolation", "container"});
  wait_nodes(1);
  const auto spec = slurp(std::filesystem::path(GPULAB_LAB_DIR) / "examples" / "serve.yaml");
  const auto id = api_->post("/v1/jobs", spec).at("id").get<std::string>();
  Json job;
  ASSERT_TRUE(wait_until(
      [&] {
        job = api_->get("/v1/jobs/" + id);
        return !job.at("endpoint").get<std::string>().empty();
      },
      180s))
      << job.dump();
  const auto& task = job.at("tasks").at(0);
  EXPECT_EQ(task.at("isolation"), "container") << job.dump();
  EXPECT_TRUE(std::filesystem::exists(dir_ / "cluster" / "agent-box" / (task.at("id").get<std::string>() + ".container.json")));
  // The container shares the agent's network namespace: its port is on the agent's address.
  const std::string url = job.at("endpoint");
  const auto hp = url.substr(7);
  const serving::CompletionTarget target{hp.substr(0, hp.rfind(':')), std::stoi(hp.substr(hp.rfind(':') + 1)), 10, 120};
  const auto answer = serving::complete(target, Json{{"prompt", "Hello"}, {"max_tokens", 8}, {"temperature", 0}});
  ASSERT_TRUE(answer.ok) << answer.error;
  EXPECT_EQ(answer.text, "I(<<<<,=");  // as a plain process gives (labs/p12-serving/README.md)
  api_->post("/v1/jobs/" + id + "/cancel", "{}");
  EXPECT_TRUE(wait_until([&] { return !serving::complete(target, Json{{"prompt", "x"}, {"max_tokens", 1}}).ok; }, 60s));
}

// An agent in a mount namespace without the cgroup hierarchies: the real
// cause of a host without cgroups, made here on purpose.
std::string without_cgroups(const std::string& args) {
  return "unshare --mount --propagation private sh -c 'umount -R /sys/fs/cgroup && exec \"$0\" \"$@\"' " +
         std::string(GPULAB_BIN_DIR) + "/gpulabd " + args;
}

std::pair<int, std::string> shell(const std::string& cmd) {
  std::string out;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return {-1, ""};
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST_F(ContainerTest, WithoutACgroupHierarchyContainerIsRefusedAndAutoFallsBackToProcesses) {
  if (std::system("command -v unshare >/dev/null 2>&1") != 0) GTEST_SKIP() << "unshare not installed (util-linux)";
  const std::string common = "agent --name lone --devices cpu_ref:1 --no-certify --control http://127.0.0.1:9 --work " +
                             (dir_ / "lone").string();
  const auto [code, out] = shell(without_cgroups(common + " --isolation container"));
  EXPECT_EQ(code, 1) << out;
  EXPECT_EQ(out,
            "gpulabd: error: --isolation container: no cgroup for the device rules: no devices controller: "
            "neither cgroup v1 devices nor cgroup2 is mounted\n");

  start_control();
  cluster_->start_agent("lone", "cpu_ref:1", {"--heartbeat-ms", "200", "--no-certify"},
                        DaemonHost{{"unshare", "--mount", "--propagation", "private", "sh", "-c",
                                    "umount -R /sys/fs/cgroup && exec \"$0\" \"$@\""},
                                   "127.0.0.1"});
  expect_one_node_runs_matmul_as_a_plain_process();
  const std::string agent_log = slurp(cluster_->daemon("lone").log);
  EXPECT_NE(agent_log.find("gpulabd agent: tasks run as plain processes: no cgroup for the device rules: no devices "
                           "controller: neither cgroup v1 devices nor cgroup2 is mounted\n"),
            std::string::npos)
      << agent_log;
}

TEST_F(ContainerTest, AnUnprivilegedAgentRunsPlainProcessesAndSaysWhyOnce) {
  if (std::system("command -v setpriv >/dev/null 2>&1") != 0) GTEST_SKIP() << "setpriv not installed (util-linux)";
  const std::string nobody = "setpriv --reuid 65534 --regid 65534 --clear-groups " + std::string(GPULAB_BIN_DIR) +
                             "/gpulabd agent --name lone --devices cpu_ref:1 --no-certify --control "
                             "http://127.0.0.1:9 --isolation container --work " +
                             (dir_ / "lone").string();
  std::filesystem::create_directories(dir_ / "lone");
  std::filesystem::permissions(dir_ / "lone", std::filesystem::perms::all);
  const auto [code, out] = shell(nobody);
  EXPECT_EQ(code, 1) << out;
  EXPECT_EQ(out, "gpulabd: error: --isolation container: not running as root (namespaces, mounts and cgroups need it)\n");

  start_control();
  std::filesystem::permissions(dir_ / "cluster", std::filesystem::perms::all);  // the agent writes its ready file here
  cluster_->start_agent("plain", "cpu_ref:1", {"--heartbeat-ms", "200", "--no-certify"},
                        DaemonHost{{"setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"}, "127.0.0.1"});
  expect_one_node_runs_matmul_as_a_plain_process();
  const std::string log = slurp(cluster_->daemon("plain").log);
  const std::string line = "gpulabd agent: tasks run as plain processes: not running as root";
  EXPECT_NE(log.find(line), std::string::npos) << log;
  EXPECT_EQ(log.find(line), log.rfind(line)) << "said more than once:\n" << log;
}

}  // namespace
