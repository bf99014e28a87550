// The control plane's Slurm hook (slurm_dispatch.cpp) against stand-in
// sbatch, scontrol and scancel scripts: what it submits, how it mirrors each
// Slurm state, restarts, cancels, and that the native scheduler never places
// a slurm job. Runs anywhere; the real Slurm is tests/p12-platform/slurm/.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "platform/control_plane.hpp"
#include "platform/inventory.hpp"

namespace {

using gpulab::Json;
using namespace platform;

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class SlurmDispatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpulab-slurm-dispatch-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    const auto fake = [&](const std::string& name, const std::string& body) {
      const auto p = dir_ / name;
      std::ofstream(p) << "#!/bin/sh\n" << body;
      std::filesystem::permissions(p, std::filesystem::perms::owner_all);
      return p.string();
    };
    const std::string d = dir_.string();
    // sbatch: --test-only accepts unless the script asks for 64 tasks; else
    // hands out ids 100, 101, ... and records the script it was given.
    sbatch_ = fake("sbatch",
                   "if [ \"$1\" = --test-only ]; then\n"
                   "  if grep -q -- '--ntasks=64' ; then echo 'allocation failure: Requested node "
                   "configuration is "
                   "not available' >&2; exit 1; fi\n"
                   "  exit 0\n"
                   "fi\n"
                   "n=$(cat " +
                       d +
                       "/next 2>/dev/null || echo 100)\n"
                       "echo $((n + 1)) > " +
                       d +
                       "/next\n"
                       "echo \"$2\" >> " +
                       d +
                       "/submitted\n"
                       "echo \"$n\"\n");
    scontrol_ = fake("scontrol",
                     "cat " + d + "/scontrol.out 2>/dev/null || echo 'No jobs in the system'\n");
    scancel_ = fake("scancel", "echo \"$1\" >> " + d + "/cancelled\n");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<ControlPlane> make(const std::string& sbatch = "") {
    ControlOptions o;
    o.state_dir = dir_ / "state";
    o.public_url = "http://127.0.0.1:1";
    o.slurm.sbatch = sbatch.empty() ? sbatch_ : sbatch;
    o.slurm.scontrol = scontrol_;
    o.slurm.scancel = scancel_;
    o.slurm.task_program = "/bin/true";
    o.slurm.poll_interval = std::chrono::milliseconds(0);  // every tick asks
    return std::make_unique<ControlPlane>(o);
  }
  // What scontrol answers from now on: one line per job.
  void slurm_says(const std::string& lines) { std::ofstream(dir_ / "scontrol.out") << lines; }
  static std::string line(int id, const std::string& state, const std::string& exit = "0:0",
                          const std::string& reason = "None") {
    return "JobId=" + std::to_string(id) + " JobName=x JobState=" + state + " Reason=" + reason +
           " ExitCode=" + exit + " NodeList=gpulab-n1\n";
  }
  static Json spec(int gpus = 2) {
    return Json{{"name", "t"},
                {"kind", "train"},
                {"gpus", gpus},
                {"backend", "cpu_ref"},
                {"executor", "slurm"},
                {"max_restarts", 1},
                {"params", Json{{"steps", 4}}}};
  }

  std::filesystem::path dir_;
  std::string sbatch_, scontrol_, scancel_;
};

TEST_F(SlurmDispatchTest, SubmitsMirrorsRestartsFromACheckpointAndSucceedsWithRankZerosResult) {
  auto cp = make();
  Node n;
  n.name = "a";
  n.protocol = kProtocolVersion;
  n.isolation = "process";
  n.devices = parse_device_spec("cpu_ref:4");
  for (auto& d : n.devices) d.dtypes = {"f32"};
  cp->register_node(n);  // idle native devices: the scheduler must still leave the job to Slurm
  const auto job = cp->submit(spec(), "").first;
  cp->tick();
  auto j = cp->get_job(job.id);
  EXPECT_EQ(j.state, JobState::kPending);
  EXPECT_EQ(j.attempt, 1);
  EXPECT_EQ(j.reason, "submitted to Slurm as job 100");
  EXPECT_TRUE(cp->tasks_of(job.id).empty()) << "no agent task for a slurm job";
  const auto attempt1 = dir_ / "state" / "slurm" / job.id / "attempt-1";
  EXPECT_EQ(slurp(dir_ / "submitted"), (attempt1 / "batch.sh").string() + "\n");
  EXPECT_NE(slurp(attempt1 / "batch.sh").find("#SBATCH --ntasks=2\n"), std::string::npos);

  slurm_says(line(100, "PENDING", "0:0", "Resources"));
  cp->tick();
  EXPECT_EQ(cp->get_job(job.id).reason, "Slurm job 100 pending: Resources");
  slurm_says(line(100, "RUNNING"));
  cp->tick();
  j = cp->get_job(job.id);
  EXPECT_EQ(j.state, JobState::kRunning);
  EXPECT_EQ(j.reason, "Slurm job 100 RUNNING on gpulab-n1, 2 task(s)");

  // A failed attempt restarts as a new sbatch (max_restarts 1).
  slurm_says(line(100, "FAILED", "1:0", "NonZeroExitCode"));
  cp->tick();
  j = cp->get_job(job.id);
  EXPECT_EQ(j.restarts, 1);
  EXPECT_NE(j.reason.find("restarting: Slurm job 100 FAILED (exit 1, NonZeroExitCode)"),
            std::string::npos)
      << j.reason;
  cp->tick();
  j = cp->get_job(job.id);
  EXPECT_EQ(j.attempt, 2);
  EXPECT_EQ(j.reason, "submitted to Slurm as job 101");

  const auto attempt2 = dir_ / "state" / "slurm" / job.id / "attempt-2";
  std::ofstream(attempt2 / "rank-0.out")
      << "gpulab: rank 0 of 2 on gpulab-n1, CUDA_VISIBLE_DEVICES=0\n"
      << R"({"event":"step","step":4,"loss":1.5})"
      << "\n"
      << R"({"event":"done","final_loss":1.5,"world":2})"
      << "\n";
  slurm_says(line(100, "FAILED", "1:0") + line(101, "COMPLETED"));
  cp->tick();
  j = cp->get_job(job.id);
  EXPECT_EQ(j.state, JobState::kSucceeded);
  EXPECT_EQ(j.reason, "Slurm job 101 COMPLETED on gpulab-n1: every rank exited 0");
  EXPECT_EQ(j.result.at("final_loss"), 1.5);
  EXPECT_NE(
      cp->logs(job.id).find("==> " + job.id + ".2.0 (rank 0 under srun) <==\ngpulab: rank 0 of 2"),
      std::string::npos)
      << cp->logs(job.id);
}

TEST_F(SlurmDispatchTest, CancelRunsScancelAndARestartedControlPlaneStillSendsIt) {
  {
    auto cp = make();
    const auto id = cp->submit(spec(), "").first.id;
    cp->tick();
    slurm_says(line(100, "RUNNING"));
    cp->tick();
    // Cancelled, then the control plane goes before its next tick.
    EXPECT_EQ(cp->cancel(id).state, JobState::kCancelled);
  }
  auto cp = make();
  cp->tick();
  EXPECT_EQ(slurp(dir_ / "cancelled"), "100\n");
  const auto j = cp->list_jobs().at(0);
  EXPECT_EQ(j.state, JobState::kCancelled);
  EXPECT_EQ(j.reason, "cancelled by the user (scancel 100)");
  cp->tick();
  EXPECT_EQ(slurp(dir_ / "cancelled"), "100\n") << "scancel once";
}

TEST_F(SlurmDispatchTest, AJobCancelledBeforeSbatchIsNeverSubmitted) {
  auto cp = make();
  const auto id = cp->submit(spec(), "").first.id;
  cp->cancel(id);
  cp->tick();
  cp->tick();
  EXPECT_FALSE(std::filesystem::exists(dir_ / "submitted"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "cancelled"));
  EXPECT_EQ(cp->get_job(id).reason, "cancelled by the user");
}

TEST_F(SlurmDispatchTest, BadInputFailsAtOnceAndAForgottenJobIsRetried) {
  auto cp = make();
  const auto id = cp->submit(spec(), "").first.id;
  cp->tick();
  slurm_says("");  // slurmctld no longer knows 100 (MinJobAge passed while we were away)
  cp->tick();
  auto j = cp->get_job(id);
  EXPECT_EQ(j.restarts, 1);
  EXPECT_NE(j.reason.find("Slurm no longer knows job 100"), std::string::npos) << j.reason;
  cp->tick();
  slurm_says(line(101, "FAILED", "2:0", "NonZeroExitCode"));  // gpulab-task's exit 2: bad input
  cp->tick();
  j = cp->get_job(id);
  EXPECT_EQ(j.state, JobState::kFailed);
  EXPECT_EQ(j.reason, "Slurm job 101 FAILED (exit 2, NonZeroExitCode)");
}

TEST_F(SlurmDispatchTest, WhatSlurmCannotRunOrNoSbatchIsA400NamingTheField) {
  auto cp = make();
  try {
    cp->submit(spec(64), "");
    FAIL() << "accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_STREQ(e.what(),
                 "gpus: Slurm cannot run 64 task(s) with one gpu:cpu_ref each: allocation failure: "
                 "Requested node "
                 "configuration is not available");
  }
  auto none = make("gpulab-no-such-sbatch");
  try {
    none->submit(spec(), "");
    FAIL() << "accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_STREQ(e.what(),
                 "executor: slurm needs gpulab-no-such-sbatch on the control plane's PATH (Debian: "
                 "apt-get install "
                 "slurm-client); not found");
  }
  EXPECT_TRUE(cp->list_jobs().empty());
}

}  // namespace

// The licence's device cap (the community edition's 8) holds for Slurm jobs
// as it does for native ones: a job that would pass it is not submitted, and
// waits with the same reason the native scheduler gives; devices held by
// agents' tasks and by live Slurm jobs count as in use.
TEST_F(SlurmDispatchTest, AJobOverTheLicenceCapWaitsWithTheNativeExecutorsReason) {
  auto cp = make();
  Node n;
  n.name = "a";
  n.protocol = kProtocolVersion;
  n.isolation = "process";
  n.devices = parse_device_spec("cpu_ref:16");
  for (auto& d : n.devices) d.dtypes = {"f32"};
  cp->register_node(n);
  Json native = spec(16);
  native.erase("executor");
  const auto native_id = cp->submit(native, "").first.id;
  const auto over_id = cp->submit(spec(16), "").first.id;
  cp->tick();
  const auto over = cp->get_job(over_id);
  EXPECT_EQ(over.state, JobState::kPending);
  EXPECT_EQ(over.attempt, 0) << "never submitted";
  EXPECT_EQ(over.reason, "licence allows 8 devices in use; 0 in use, job needs 16");
  EXPECT_EQ(cp->get_job(native_id).reason, over.reason) << "the same words from either executor";
  EXPECT_FALSE(std::filesystem::exists(dir_ / "submitted"));

  cp->cancel(native_id);  // (cancelled jobs hold nothing)
  cp->cancel(over_id);
  Json four = native;
  four["gpus"] = 4;
  const auto four_id = cp->submit(four, "").first.id;
  cp->tick();
  ASSERT_EQ(cp->get_job(four_id).state, JobState::kRunning);  // 4 agent tasks hold devices
  const auto slurm4_id = cp->submit(spec(4), "").first.id;
  const auto one_id = cp->submit(spec(1), "").first.id;
  cp->tick();
  EXPECT_EQ(cp->get_job(slurm4_id).reason, "submitted to Slurm as job 100");
  EXPECT_EQ(cp->get_job(one_id).reason, "licence allows 8 devices in use; 8 in use, job needs 1")
      << "4 native tasks and a live 4-rank Slurm job";
  slurm_says(line(100, "COMPLETED"));
  cp->tick();
  ASSERT_EQ(cp->get_job(slurm4_id).state, JobState::kSucceeded);
  cp->tick();
  EXPECT_EQ(cp->get_job(one_id).reason, "submitted to Slurm as job 101");
}

// And the other way: the native scheduler counts the ranks of live Slurm jobs
// (submitted, not yet ended, pending in Slurm's queue included) against the
// same cap, so a native job waits while Slurm holds the devices and is placed
// in the pass after Slurm reports the job ended; a restarted control plane
// counts them again from the attempts' files.
TEST_F(SlurmDispatchTest, LiveSlurmJobsHoldTheCapAgainstNativeJobs) {
  Node n;
  n.name = "a";
  n.protocol = kProtocolVersion;
  n.isolation = "process";
  n.devices = parse_device_spec("cpu_ref:16");
  for (auto& d : n.devices) d.dtypes = {"f32"};
  Json native = spec(4);
  native.erase("executor");
  std::string slurm_id;
  {
    auto cp = make();
    cp->register_node(n);
    slurm_id = cp->submit(spec(8), "").first.id;  // the whole cap
    cp->tick();
    ASSERT_EQ(cp->get_job(slurm_id).reason, "submitted to Slurm as job 100");
    slurm_says(line(100, "PENDING", "0:0", "Priority"));  // queued in Slurm: holds the devices all the same
    const auto held_back = cp->submit(native, "").first.id;
    cp->tick();
    cp->tick();
    EXPECT_EQ(cp->get_job(held_back).state, JobState::kPending);
    EXPECT_EQ(cp->get_job(held_back).reason, "licence allows 8 devices in use; 8 in use, job needs 4");
    EXPECT_TRUE(cp->tasks_of(held_back).empty());
    cp->cancel(held_back);
  }
  // A restarted control plane: Slurm job 100 is running, and counted.
  slurm_says(line(100, "RUNNING"));
  auto cp = make();
  cp->register_node(n);
  const auto native_id = cp->submit(native, "").first.id;
  cp->tick();
  EXPECT_EQ(cp->get_job(native_id).reason, "licence allows 8 devices in use; 8 in use, job needs 4");
  slurm_says(line(100, "COMPLETED"));
  cp->tick();  // the Slurm job ends: its 8 devices are released...
  EXPECT_EQ(cp->get_job(slurm_id).state, JobState::kSucceeded);
  cp->tick();  // ...and the next pass places the native job
  EXPECT_EQ(cp->get_job(native_id).state, JobState::kRunning);
  EXPECT_EQ(cp->tasks_of(native_id).size(), 4U);
}
