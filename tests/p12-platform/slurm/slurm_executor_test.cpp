// The Slurm executor against a real Slurm (ctest label `slurm`): a one-node
// cluster of the test's own (slurm_cluster.hpp) whose gres.conf gpulabctl
// wrote, a control plane (gpulabd control) that submits to it, and beside it
// one native agent. A 2-rank train job gives the same losses under Slurm as
// under the native executor; cancelling through gpulabctl cancels the Slurm
// job; Slurm's refusals come back as one 400 naming the field.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <set>

#include "gpulab_test/program_run.hpp"
#include "platform/api_client.hpp"
#include "platform/local_cluster.hpp"
#include "slurm_cluster.hpp"

namespace {

using gpulab::Json;
using gpulab_test::SlurmCluster;
using namespace platform;
using namespace std::chrono_literals;

// One Slurm cluster for the suite: starting slurmctld costs seconds.
class SlurmTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (const auto why = SlurmCluster::missing_prerequisites()) {
      skip_reason_ = new std::string(*why);
      return;
    }
    // Its two ports are picked free and then bound by the daemons: another
    // process can take one in between, so a start that fails is tried again
    // (a daemon that cannot bind exits at once, so this costs little).
    for (int attempt = 1; slurm_ == nullptr; ++attempt) {
      try {
        slurm_ = new SlurmCluster(std::filesystem::path(GPULAB_BIN_DIR) / "gpulabctl");
      } catch (const std::exception& e) {
        if (attempt == 3) throw;
        std::fprintf(stderr, "Slurm test cluster, start %d failed, trying again: %s\n", attempt,
                     e.what());
      }
    }
    // gpulabd control and every Slurm command it runs read this cluster's conf.
    ::setenv("SLURM_CONF", slurm_->conf().c_str(), 1);
  }
  static void TearDownTestSuite() {
    delete slurm_;  // scancel everything, stop the daemons, remove the directory
    slurm_ = nullptr;
    delete skip_reason_;
    skip_reason_ = nullptr;
  }

  void SetUp() override {
    if (skip_reason_ != nullptr) GTEST_SKIP() << "no Slurm here: " << *skip_reason_;
    ASSERT_NE(slurm_, nullptr);
    char tmpl[] = "/tmp/gpulab-slurm-it-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    cluster_ = std::make_unique<LocalCluster>(GPULAB_BIN_DIR, dir_ / "cluster");
    cluster_->start_control();
    api_ = std::make_unique<ApiClient>(cluster_->control_url());
  }
  void TearDown() override {
    if (HasFailure() && slurm_ != nullptr) {
      ADD_FAILURE() << "Slurm daemons' logs:\n" << slurm_->logs();
    }
    cluster_.reset();
    std::error_code ec;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ec);
  }

  static Json train_spec(const std::string& name, const std::string& executor, int steps) {
    return Json{{"name", name},
                {"kind", "train"},
                {"gpus", 2},
                {"backend", "cpu_ref"},
                {"executor", executor},
                {"max_restarts", 0},
                {"params", Json{{"steps", steps}, {"seed", 11}, {"checkpoint_every", 2}}}};
  }
  std::string submit(const Json& spec) {
    return api_->post("/v1/jobs", spec.dump()).at("id").get<std::string>();
  }

  // "Slurm job 42 ..." in the job's reason -> "42".
  static std::string slurm_id_of(const Json& job) {
    std::smatch m;
    const auto reason = job.at("reason").get<std::string>();
    return std::regex_search(reason, m,
                             std::regex("(?:Slurm job|submitted to Slurm as job) ([0-9]+)"))
               ? m[1].str()
               : "";
  }

  std::string ctl(const std::string& args) {
    const auto r =
        gpulab_test::run_program("gpulabctl", "--control " + cluster_->control_url() + " " + args,
                                 gpulab_test::Stderr::kMerged);
    last_exit_ = r.exit_code;
    return r.out;
  }

  static SlurmCluster* slurm_;
  static std::string* skip_reason_;
  std::filesystem::path dir_;
  std::unique_ptr<LocalCluster> cluster_;
  std::unique_ptr<ApiClient> api_;
  int last_exit_ = -1;
};

SlurmCluster* SlurmTest::slurm_ = nullptr;
std::string* SlurmTest::skip_reason_ = nullptr;

TEST_F(SlurmTest, GresConfFromTheInventoryIsWhatSlurmdRuns) {
  const auto [rc, node] = slurm_->run({"scontrol", "show", "node", SlurmCluster::kNode});
  ASSERT_EQ(rc, 0) << node;
  EXPECT_NE(node.find("Gres=gpu:cpu_ref:4"), std::string::npos) << node;
  EXPECT_NE(node.find("State=IDLE"), std::string::npos) << node;
  // Each task of a 2-task step gets its own device: Slurm sets
  // CUDA_VISIBLE_DEVICES from the gres.conf gpulabctl wrote.
  const auto out =
      slurm_->run({"srun", "-n", "2", "--gpus-per-task=cpu_ref:1", "--gpu-bind=per_task:1", "bash",
                   "-c", "echo rank=$SLURM_PROCID cvd=$CUDA_VISIBLE_DEVICES"});
  ASSERT_EQ(out.first, 0) << out.second;
  EXPECT_NE(out.second.find("rank=0 cvd="), std::string::npos) << out.second;
  EXPECT_NE(out.second.find("rank=1 cvd="), std::string::npos) << out.second;
  std::set<std::string> devices;
  const std::regex cvd("cvd=([0-9]+)");
  for (auto it = std::sregex_iterator(out.second.begin(), out.second.end(), cvd);
       it != std::sregex_iterator(); ++it) {
    devices.insert((*it)[1].str());
  }
  EXPECT_EQ(devices.size(), 2U) << "each rank its own device: " << out.second;
}

TEST_F(SlurmTest, TwoRankTrainUnderSlurmGivesTheNativeExecutorsLoss) {
  cluster_->start_agent("node-a", "cpu_ref:2",
                        {"--heartbeat-ms", "200", "--no-certify", "--isolation", "process"});
  ASSERT_TRUE(wait_until([&] { return api_->get("/v1/nodes").size() == 1; }, 30s));
  const auto native = submit(train_spec("native", "native", 6));
  const auto slurm = submit(train_spec("under-slurm", "slurm", 6));
  const auto n = wait_for_job(*api_, native, {"succeeded", "failed", "cancelled"}, 180s);
  const auto s = wait_for_job(*api_, slurm, {"succeeded", "failed", "cancelled"}, 180s);
  ASSERT_EQ(n.at("state"), "succeeded") << n.dump();
  ASSERT_EQ(s.at("state"), "succeeded") << s.dump() << "\n"
                                        << api_->get_text("/v1/jobs/" + slurm + "/logs");
  EXPECT_NE(s.at("reason").get<std::string>().find("COMPLETED"), std::string::npos) << s.dump();
  const auto& nr = n.at("result");
  const auto& sr = s.at("result");
  ASSERT_TRUE(sr.contains("final_loss")) << s.dump();
  // Bit for bit: the same seed, world and backend give the same loss sequence.
  EXPECT_EQ(sr.at("first_loss"), nr.at("first_loss"));
  EXPECT_EQ(sr.at("final_loss"), nr.at("final_loss"));
  EXPECT_EQ(sr.at("weights_checksum"), nr.at("weights_checksum"));
  EXPECT_EQ(sr.at("world"), 2);

  // Mirrored into gpulabctl: the job list and its logs (each rank under srun).
  const auto jobs = ctl("jobs");
  EXPECT_EQ(last_exit_, 0) << jobs;
  EXPECT_NE(jobs.find("under-slurm"), std::string::npos) << jobs;
  const auto logs = ctl("logs " + slurm);
  EXPECT_NE(logs.find("(rank 0 under srun)"), std::string::npos) << logs;
  EXPECT_NE(logs.find("(rank 1 under srun)"), std::string::npos) << logs;
  EXPECT_NE(logs.find("2 task(s)"), std::string::npos) << logs;
  // Each rank had its own GRES device (the order of the two is Slurm's).
  const bool distinct =
      (logs.find("rank 0 of 2 on gpulab-n1, CUDA_VISIBLE_DEVICES=0\n") != std::string::npos &&
       logs.find("rank 1 of 2 on gpulab-n1, CUDA_VISIBLE_DEVICES=1\n") != std::string::npos) ||
      (logs.find("rank 0 of 2 on gpulab-n1, CUDA_VISIBLE_DEVICES=1\n") != std::string::npos &&
       logs.find("rank 1 of 2 on gpulab-n1, CUDA_VISIBLE_DEVICES=0\n") != std::string::npos);
  EXPECT_TRUE(distinct) << logs;
  EXPECT_NE(logs.find("\"event\":\"done\""), std::string::npos) << logs;
}

TEST_F(SlurmTest, CancelThroughGpulabctlCancelsTheSlurmJob) {
  const auto id = submit(train_spec("long", "slurm", 1'000'000));
  const auto running =
      wait_for_job(*api_, id, {"running", "succeeded", "failed", "cancelled"}, 120s);
  ASSERT_EQ(running.at("state"), "running") << running.dump();
  const auto slurm_id = slurm_id_of(running);
  ASSERT_FALSE(slurm_id.empty()) << running.dump();
  ASSERT_EQ(slurm_->run({"squeue", "-h", "-j", slurm_id, "-o", "%i %T"}).second,
            slurm_id + " RUNNING\n");

  const auto out = ctl("cancel " + id);
  ASSERT_EQ(last_exit_, 0) << out;
  EXPECT_EQ(out, "cancelled " + id + "\n");
  EXPECT_TRUE(slurm_->left_queue(slurm_id, 120s)) << slurm_->run({"squeue", "-j", slurm_id}).second;
  const auto [rc, state] = slurm_->run({"scontrol", "show", "job", "-o", slurm_id});
  EXPECT_NE(state.find("JobState=CANCELLED"), std::string::npos) << state;
  const auto job = api_->get("/v1/jobs/" + id);
  EXPECT_EQ(job.at("state"), "cancelled");
  EXPECT_TRUE(wait_until(
      [&] {
        return api_->get("/v1/jobs/" + id).at("reason") ==
               "cancelled by the user (scancel " + slurm_id + ")";
      },
      60s))
      << api_->get("/v1/jobs/" + id).dump();
}

TEST_F(SlurmTest, WhatSlurmCannotRunIsOne400NamingTheField) {
  // 64 ranks with one gpu:cpu_ref each; the node has 4.
  auto spec = train_spec("too-wide", "slurm", 2);
  spec["gpus"] = 64;
  const auto path = dir_ / "wide.json";
  std::ofstream(path) << spec.dump();
  const auto out = ctl("submit " + path.string());
  EXPECT_EQ(last_exit_, 2) << out;
  EXPECT_EQ(
      out.rfind("gpulabctl: error: gpus: Slurm cannot run 64 task(s) with one gpu:cpu_ref each: ",
                0),
      0U)
      << out;
  EXPECT_NE(out.find("Requested node configuration is not available"), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_TRUE(api_->get("/v1/jobs").empty());
}

}  // namespace
