// The Slurm executor on a Slurm cluster of several nodes (ctest label
// `slurm`, root): three hosts in network namespaces on a bridge
// (netns_hosts.hpp) — slurmctld and gpulabd control on `ctl`, one slurmd on
// each of `n1` and `n2`, each node with its own hostname and address and two
// GRES devices (slurm_cluster.hpp). A 2-rank train job with `nodes: 2` runs
// one rank per node, its ring all-reduce crossing the veths, with the native
// executor's loss; gpulabctl cancel cancels it; a node whose slurmd is killed
// is declared down by Slurm, the job fails as Slurm says (NODE_FAIL),
// gpulabctl shows it, and the restart gpulab submits resumes from the
// checkpoint once the node is back.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

#include "gpulab_test/netns_hosts.hpp"
#include "gpulab_test/program_run.hpp"
#include "gpulab_test/thread_netns.hpp"
#include "platform/api_client.hpp"
#include "platform/local_cluster.hpp"
#include "slurm_cluster.hpp"

namespace {

using gpulab::Json;
using gpulab_test::NetnsHosts;
using gpulab_test::SlurmCluster;
using namespace platform;
using namespace std::chrono_literals;

const std::vector<std::string> kNodes{"n1", "n2"};

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The JSON lines of a rank's output with this "event".
std::vector<Json> events(const std::string& text, const std::string& event) {
  std::vector<Json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.front() != '{') continue;
    const auto j = Json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.value("event", "") == event) out.push_back(j);
  }
  return out;
}

// One cluster for the suite: three namespaces and three daemons take seconds.
class SlurmMultiNodeTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (const auto why = SlurmCluster::missing_prerequisites()) {
      skip_reason_ = new std::string(*why);
      return;
    }
    if (!gpulab_test::ip_installed()) {
      skip_reason_ = new std::string("ip not installed (Debian: iproute2)");
      return;
    }
    hosts_ = new NetnsHosts({"ctl", "n1", "n2"});
    slurm_ = new SlurmCluster(std::filesystem::path(GPULAB_BIN_DIR) / "gpulabctl",
                              gpulab_test::SlurmLayout{hosts_, "ctl", kNodes, 2});
    ::setenv("SLURM_CONF", slurm_->conf().c_str(), 1);
  }
  static void TearDownTestSuite() {
    delete slurm_;  // the daemons leave the namespaces before they go
    slurm_ = nullptr;
    delete hosts_;
    hosts_ = nullptr;
    delete skip_reason_;
    skip_reason_ = nullptr;
  }

  void SetUp() override {
    if (skip_reason_ != nullptr) GTEST_SKIP() << "no Slurm here: " << *skip_reason_;
    ASSERT_NE(slurm_, nullptr);
    // Every node idle: a test that killed a slurmd brought it back.
    for (const auto& n : kNodes) {
      ASSERT_TRUE(wait_until([&] { return slurm_->node_state(n) == "idle"; }, 60s)) << n << ": "
                                                                                     << slurm_->node_state(n);
    }
    char tmpl[] = "/tmp/gpulab-slurm-mn-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    // This thread (the API calls, gpulabctl) and the control plane (sbatch,
    // scontrol, scancel) sit on `ctl`, beside slurmctld.
    seat_ = std::make_unique<gpulab_test::ThreadNetns>(hosts_->netns("ctl"));
    cluster_ = std::make_unique<LocalCluster>(GPULAB_BIN_DIR, dir_ / "cluster");
    cluster_->start_control({}, on("ctl"));
    api_ = std::make_unique<ApiClient>(cluster_->control_url());
  }
  void TearDown() override {
    if (HasFailure() && slurm_ != nullptr) ADD_FAILURE() << "Slurm daemons' logs:\n" << slurm_->logs();
    api_.reset();
    cluster_.reset();
    seat_.reset();
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  static DaemonHost on(const std::string& host) { return {hosts_->exec_prefix(host), hosts_->ip(host)}; }

  static Json train_spec(const std::string& name, const std::string& executor, int steps, int max_restarts) {
    Json s{{"name", name},
           {"kind", "train"},
           {"gpus", 2},
           {"backend", "cpu_ref"},
           {"executor", executor},
           {"max_restarts", max_restarts},
           {"params", Json{{"steps", steps}, {"seed", 11}, {"checkpoint_every", 2}}}};
    if (executor == "slurm") s["nodes"] = 2;
    return s;
  }
  std::string submit(const Json& spec) { return api_->post("/v1/jobs", spec.dump()).at("id").get<std::string>(); }

  std::string ctl(const std::string& args) {
    const auto r = gpulab_test::run_program("gpulabctl", "--control " + cluster_->control_url() + " " + args,
                                            gpulab_test::Stderr::kMerged);
    last_exit_ = r.exit_code;
    return r.out;
  }
  std::filesystem::path attempt_dir(const std::string& id, int attempt) const {
    return cluster_->state_dir() / "slurm" / id / ("attempt-" + std::to_string(attempt));
  }
  // "Slurm job 42 ..." in the job's reason -> "42".
  static std::string slurm_id_of(const Json& job) {
    std::smatch m;
    const auto reason = job.at("reason").get<std::string>();
    return std::regex_search(reason, m, std::regex("(?:Slurm job|submitted to Slurm as job) ([0-9]+)")) ? m[1].str()
                                                                                                       : "";
  }
  // The node each rank ran on, from the line the batch script's srun wrapper prints.
  static std::map<int, std::string> rank_nodes(const std::string& logs) {
    std::map<int, std::string> out;
    const std::regex line("gpulab: rank ([0-9]+) of 2 on ([a-z0-9-]+),");
    for (auto it = std::sregex_iterator(logs.begin(), logs.end(), line); it != std::sregex_iterator(); ++it) {
      out[std::stoi((*it)[1].str())] = (*it)[2].str();
    }
    return out;
  }
  int checkpoint_step(const std::string& id) {
    std::ifstream in(cluster_->state_dir() / "checkpoints" / id / "latest");
    std::string name;  // ckpt-00000012.bin
    in >> name;
    return name.size() > 5 ? std::atoi(name.c_str() + 5) : 0;
  }

  static NetnsHosts* hosts_;
  static SlurmCluster* slurm_;
  static std::string* skip_reason_;
  std::filesystem::path dir_;
  std::unique_ptr<gpulab_test::ThreadNetns> seat_;
  std::unique_ptr<LocalCluster> cluster_;
  std::unique_ptr<ApiClient> api_;
  int last_exit_ = -1;
};

NetnsHosts* SlurmMultiNodeTest::hosts_ = nullptr;
SlurmCluster* SlurmMultiNodeTest::slurm_ = nullptr;
std::string* SlurmMultiNodeTest::skip_reason_ = nullptr;

TEST_F(SlurmMultiNodeTest, EachSlurmdIsANodeOfItsOwnWithItsOwnNameAndAddress) {
  for (const auto& n : kNodes) {
    const auto [rc, node] = slurm_->run({"scontrol", "show", "node", n});
    ASSERT_EQ(rc, 0) << node;
    EXPECT_NE(node.find("NodeAddr=" + hosts_->ip(n) + " "), std::string::npos) << node;
    EXPECT_NE(node.find("NodeHostName=" + n + " "), std::string::npos) << node;
    EXPECT_NE(node.find("Gres=gpu:cpu_ref:2"), std::string::npos) << node;
  }
  // One task per node: each sees its own hostname (UTS namespace) and address (netns).
  const auto [rc, out] = slurm_->run({"srun", "--nodes=2", "--ntasks=2", "bash", "-c",
                                      "echo $SLURM_PROCID $SLURMD_NODENAME $(hostname) $(ip -o -4 addr show eth0)"});
  ASSERT_EQ(rc, 0) << out;
  for (const auto& n : kNodes) {
    EXPECT_NE(out.find(" " + n + " " + n + " "), std::string::npos) << out;
    EXPECT_NE(out.find("inet " + hosts_->ip(n) + "/"), std::string::npos) << out;
  }
}

TEST_F(SlurmMultiNodeTest, TwoRanksOnTwoNodesTrainAcrossTheVethsWithTheNativeLoss) {
  cluster_->start_agent("native-a", "cpu_ref:2", {"--heartbeat-ms", "200", "--no-certify", "--isolation", "process"},
                        on("ctl"));
  ASSERT_TRUE(wait_until([&] { return api_->get("/v1/nodes").size() == 1; }, 30s));
  std::map<std::string, unsigned long long> tx_before;
  for (const auto& n : kNodes) tx_before[n] = hosts_->counter(n, "tx_bytes");

  const auto native = submit(train_spec("native", "native", 6, 0));
  const auto slurm = submit(train_spec("two-nodes", "slurm", 6, 0));
  const auto n = wait_for_job(*api_, native, {"succeeded", "failed", "cancelled"}, 180s);
  const auto s = wait_for_job(*api_, slurm, {"succeeded", "failed", "cancelled"}, 180s);
  ASSERT_EQ(n.at("state"), "succeeded") << n.dump();
  ASSERT_EQ(s.at("state"), "succeeded") << s.dump() << "\n" << api_->get_text("/v1/jobs/" + slurm + "/logs");
  EXPECT_NE(s.at("reason").get<std::string>().find("COMPLETED on n[1-2]"), std::string::npos) << s.dump();
  // Bit for bit: the same seed, world and backend, whichever hosts the ranks are on.
  EXPECT_EQ(s.at("result").at("first_loss"), n.at("result").at("first_loss"));
  EXPECT_EQ(s.at("result").at("final_loss"), n.at("result").at("final_loss"));
  EXPECT_EQ(s.at("result").at("weights_checksum"), n.at("result").at("weights_checksum"));
  EXPECT_EQ(s.at("spec").at("nodes"), 2);
  EXPECT_NE(slurp(attempt_dir(slurm, 1) / "batch.sh").find("#SBATCH --nodes=2\n"), std::string::npos);

  // One rank on each node...
  const auto logs = ctl("logs " + slurm);
  const auto where = rank_nodes(logs);
  ASSERT_EQ(where.size(), 2U) << logs;
  EXPECT_EQ((std::set<std::string>{where.at(0), where.at(1)}), (std::set<std::string>{"n1", "n2"})) << logs;
  // ...each listening on its own node's veth address (--address auto), which
  // is where its peer connected...
  for (const auto& [rank, node] : where) {
    const auto record = slurp(attempt_dir(slurm, 1) / "rendezvous" / ("rank-" + std::to_string(rank)));
    EXPECT_EQ(record.rfind(hosts_->ip(node) + " ", 0), 0U) << "rank " << rank << " on " << node << ": " << record;
  }
  // ...and what each rank sent left its host through the veth.
  for (const auto& [rank, node] : where) {
    const auto done = events(slurp(attempt_dir(slurm, 1) / ("rank-" + std::to_string(rank) + ".out")), "done");
    ASSERT_EQ(done.size(), 1U) << "rank " << rank;
    const auto sent = done.front().at("allreduce_bytes").get<unsigned long long>();
    const auto crossed = hosts_->counter(node, "tx_bytes") - tx_before[node];
    EXPECT_GT(sent, 0U);
    EXPECT_GE(crossed, sent) << "rank " << rank << " on " << node;
    std::printf("rank %d on %s (%s): all-reduce sent %llu B, veth tx grew %llu B\n", rank, node.c_str(),
                hosts_->ip(node).c_str(), sent, crossed);
  }
  const auto jobs = ctl("jobs");
  EXPECT_NE(jobs.find("two-nodes"), std::string::npos) << jobs;
}

TEST_F(SlurmMultiNodeTest, CancelThroughGpulabctlEndsTheRanksOnBothNodes) {
  const auto id = submit(train_spec("long", "slurm", 1'000'000, 0));
  const auto running = wait_for_job(*api_, id, {"running", "succeeded", "failed", "cancelled"}, 120s);
  ASSERT_EQ(running.at("state"), "running") << running.dump();
  const auto slurm_id = slurm_id_of(running);
  ASSERT_FALSE(slurm_id.empty()) << running.dump();
  EXPECT_EQ(slurm_->run({"squeue", "-h", "-j", slurm_id, "-o", "%i %T %N"}).second,
            slurm_id + " RUNNING n[1-2]\n");

  const auto out = ctl("cancel " + id);
  ASSERT_EQ(last_exit_, 0) << out;
  EXPECT_EQ(out, "cancelled " + id + "\n");
  EXPECT_TRUE(slurm_->left_queue(slurm_id, 120s)) << slurm_->run({"squeue", "-j", slurm_id}).second;
  EXPECT_NE(slurm_->run({"scontrol", "show", "job", "-o", slurm_id}).second.find("JobState=CANCELLED"),
            std::string::npos);
  // Nothing of the job is left on either node: only its slurmd.
  for (const auto& n : kNodes) {
    EXPECT_TRUE(wait_until(
        [&] {
          const auto pids = gpulab_test::shell_or_throw("ip netns pids " + hosts_->netns(n));
          return std::count(pids.begin(), pids.end(), '\n') == 1;
        },
        30s))
        << n << ": " << gpulab_test::shell("ip netns pids " + hosts_->netns(n)).out;
  }
}

TEST_F(SlurmMultiNodeTest, AKilledSlurmdIsANodeFailMirroredAndTheRestartResumesFromTheCheckpoint) {
  const auto id = submit(train_spec("survivor", "slurm", 1'000'000, 1));
  const auto running = wait_for_job(*api_, id, {"running", "succeeded", "failed", "cancelled"}, 120s);
  ASSERT_EQ(running.at("state"), "running") << running.dump();
  const auto first = slurm_id_of(running);
  ASSERT_TRUE(wait_until([&] { return checkpoint_step(id) >= 20; }, 60s));

  // n2's slurmd dies; its slurmstepd and rank run on, as on a real node
  // whose daemon crashed. Slurm notices when n2 stops answering its pings.
  const int left = slurm_->kill_slurmd("n2");
  // Whatever fails below, n2 gets its slurmd back for the tests after this one.
  struct Revive {
    SlurmCluster* slurm;
    bool done = false;
    ~Revive() {
      if (!done) slurm->start_slurmd("n2");
    }
  } revive{slurm_};
  EXPECT_GE(left, 2) << "the step daemon and the rank stay";
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_TRUE(wait_until([&] { return api_->get("/v1/jobs/" + id).at("restarts") == 1; }, 120s))
      << api_->get("/v1/jobs/" + id).dump() << "\n"
      << slurm_->run({"scontrol", "show", "job", "-o", first}).second;
  const auto seen = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - killed);
  const int saved = checkpoint_step(id);
  EXPECT_NE(slurm_->run({"scontrol", "show", "job", "-o", first}).second.find("JobState=NODE_FAIL"),
            std::string::npos);
  EXPECT_EQ(slurm_->node_state("n2"), "down*");
  // gpulab mirrors it: the attempt failed as Slurm said, and the restart
  // it submitted waits in Slurm's queue for a second node, saying why.
  Json job;
  ASSERT_TRUE(wait_until(
      [&] {
        job = api_->get("/v1/jobs/" + id);
        const auto reason = job.at("reason").get<std::string>();
        return job.at("attempt") == 2 && reason.find(" pending: ") != std::string::npos;
      },
      60s))
      << job.dump();
  EXPECT_EQ(job.at("state"), "pending");
  EXPECT_EQ(job.at("reason").get<std::string>().rfind("restarting: Slurm job " + first + " NODE_FAIL", 0), 0U)
      << job.dump();
  const auto listed = ctl("jobs");
  EXPECT_NE(listed.find("restarting: Slurm job " + first + " NODE_FAIL"), std::string::npos) << listed;
  std::string second = slurp(attempt_dir(id, 2) / "slurm_job_id");
  second = second.substr(0, second.find('\n'));
  EXPECT_NE(second, first);
  EXPECT_NE(listed.find("Slurm job " + second + " pending"), std::string::npos) << listed;
  std::printf("slurmd of n2 killed at checkpoint step >= %d: NODE_FAIL mirrored after %lld s; attempt 2: %s\n",
              saved, static_cast<long long>(seen.count()), job.at("reason").get<std::string>().c_str());

  // n2 comes back (ReturnToService=2): attempt 2 runs on both nodes and
  // starts from the last checkpoint, not from step 1.
  slurm_->start_slurmd("n2");
  revive.done = true;
  job = wait_for_job(*api_, id, {"running", "succeeded", "failed", "cancelled"}, 120s);
  ASSERT_EQ(job.at("state"), "running") << job.dump();
  std::vector<Json> steps;
  ASSERT_TRUE(wait_until(
      [&] {
        steps = events(slurp(attempt_dir(id, 2) / "rank-0.out"), "step");
        return !steps.empty();
      },
      60s))
      << ctl("logs " + id);
  const int resumed_at = steps.front().at("step").get<int>();
  EXPECT_GT(resumed_at, saved) << "nothing checkpointed before the node failed is redone";
  EXPECT_GT(resumed_at, 1);
  std::printf("attempt 2 on %s: first step %d (checkpoint at %d)\n",
              rank_nodes(ctl("logs " + id)).size() == 2 ? "n1 and n2" : "?", resumed_at, saved);
  ctl("cancel " + id);
  EXPECT_EQ(last_exit_, 0);
  ASSERT_TRUE(wait_until(
      [&] { return slurm_->node_state("n1") == "idle" && slurm_->node_state("n2") == "idle"; }, 120s))
      << slurm_->run({"sinfo", "-N", "-l"}).second;
}

}  // namespace
