// The control plane's state machine in-process, with a fake clock: admission,
// placement, completion, restarts, node loss, recovery from SQLite.
#include "platform/control_plane.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "gpulab/errors.hpp"
#include "licensing/signed_licence.hpp"
#include "platform/inventory.hpp"
#include "platform/prometheus_targets.hpp"

namespace {

using namespace platform;
using gpulab::Json;

class ControlPlaneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpulab-cp-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<ControlPlane> make() {
    ControlOptions o;
    o.state_dir = dir_;
    o.public_url = "http://127.0.0.1:1";
    o.clock = [this] { return now_; };
    return std::make_unique<ControlPlane>(o);
  }

  // A control plane under a P11 licence granting `features` (signed here with
  // a fresh vendor key), on a clock inside its validity.
  std::unique_ptr<ControlPlane> make_licensed(const std::string& features) {
    const licensing::SignedLicenceFiles lic =
        licensing::issue_signed_licence(dir_, "lab", features, 8);
    now_ = 1767225600;  // 2026-01-01
    ControlOptions c;
    c.state_dir = dir_ / "state";
    c.public_url = "http://127.0.0.1:1";
    c.clock = [this] { return now_; };
    c.licence.license_file = lic.licence;
    c.licence.public_key_file = lic.public_key;
    return std::make_unique<ControlPlane>(c);
  }

  static Node node(const std::string& name, const std::string& backend, int n) {
    Node nd;
    nd.name = name;
    nd.address = "http://127.0.0.1:2";
    nd.protocol = kProtocolVersion;
    nd.isolation = "process";
    nd.devices = parse_device_spec(backend + ":" + std::to_string(n));
    for (auto& d : nd.devices) d.dtypes = {"f32"};
    return nd;
  }

  static Json train(int gpus, int max_restarts = 3) {
    return Json{{"name", "t"}, {"kind", "train"}, {"gpus", gpus}, {"backend", "cpu_ref"}, {"max_restarts", max_restarts}};
  }

  std::vector<Assignment> beat(ControlPlane& cp, const std::string& name, std::vector<TaskReport> reports = {}) {
    Heartbeat hb;
    hb.node = name;
    hb.tasks = std::move(reports);
    return cp.heartbeat(hb, std::chrono::milliseconds(0));
  }

  std::filesystem::path dir_;
  double now_ = 1000;
};

TEST_F(ControlPlaneTest, AJobRunsToSuccessThroughHeartbeats) {
  auto cp = make();
  cp->register_node(node("a", "cpu_ref", 2));
  const auto [job, created] = cp->submit(train(2), "");
  EXPECT_TRUE(created);
  EXPECT_EQ(job.state, JobState::kPending);
  cp->tick();
  EXPECT_EQ(cp->get_job(job.id).state, JobState::kRunning);
  auto work = beat(*cp, "a");
  ASSERT_EQ(work.size(), 2U);
  EXPECT_EQ(work[0].argv[0], "train");
  std::vector<TaskReport> running;
  for (const auto& a : work) running.push_back(TaskReport{a.task.id, TaskState::kRunning, -1, "", {}, {}, "process"});
  EXPECT_EQ(beat(*cp, "a", running).size(), 2U);
  cp->report_task("a", TaskReport{work[0].task.id, TaskState::kSucceeded, 0, "exited 0",
                                  Json{{"event", "done"}, {"final_loss", 0.5}}, "log of rank 0\n", "process"});
  EXPECT_EQ(cp->get_job(job.id).state, JobState::kRunning);
  cp->report_task("a", TaskReport{work[1].task.id, TaskState::kSucceeded, 0, "exited 0", {}, "", "process"});
  const auto done = cp->get_job(job.id);
  EXPECT_EQ(done.state, JobState::kSucceeded);
  EXPECT_EQ(done.result.at("final_loss"), 0.5);
  EXPECT_NE(cp->logs(job.id).find("log of rank 0"), std::string::npos);
  // Finished tasks are no longer assigned: the agent drops them.
  EXPECT_TRUE(beat(*cp, "a").empty());
}

TEST_F(ControlPlaneTest, IdempotencyKeyReturnsTheFirstJob) {
  auto cp = make();
  const auto a = cp->submit(train(1), "k1");
  const auto b = cp->submit(train(1), "k1");
  EXPECT_TRUE(a.second);
  EXPECT_FALSE(b.second);
  EXPECT_EQ(a.first.id, b.first.id);
  EXPECT_EQ(cp->list_jobs().size(), 1U);
}

TEST_F(ControlPlaneTest, BadSpecsAre400AndServeNeedsTheServingFeature) {
  auto cp = make();
  try {
    cp->submit(Json{{"name", "x"}, {"kind", "train"}, {"gpus", 0}}, "");
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(std::string(e.what()).rfind("gpus:", 0), 0U);
  }
  try {
    cp->submit(Json{{"name", "x"}, {"kind", "serve"}}, "");  // the community edition has no serving
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 403);
    EXPECT_EQ(std::string(e.what()), "the licence does not include the 'serving' feature that serve jobs need");
  }
  EXPECT_TRUE(cp->list_jobs().empty());
}

TEST_F(ControlPlaneTest, AFailedRankRestartsTheGangThenGivesUp) {
  auto cp = make();
  cp->register_node(node("a", "cpu_ref", 2));
  const auto id = cp->submit(train(2, 1), "").first.id;
  cp->tick();
  auto work = beat(*cp, "a");
  ASSERT_EQ(work.size(), 2U);
  cp->report_task("a", TaskReport{work[1].task.id, TaskState::kFailed, 1, "exited 1", {}, "", ""});
  auto j = cp->get_job(id);
  EXPECT_EQ(j.state, JobState::kPending);
  EXPECT_EQ(j.restarts, 1);
  EXPECT_NE(j.reason.find("rank 1 on a exited 1"), std::string::npos) << j.reason;
  // The other rank of attempt 1 is no longer wanted.
  cp->tick();
  work = beat(*cp, "a");
  ASSERT_EQ(work.size(), 2U);
  EXPECT_EQ(work[0].task.attempt, 2);
  cp->report_task("a", TaskReport{work[0].task.id, TaskState::kFailed, 1, "exited 1", {}, "", ""});
  j = cp->get_job(id);
  EXPECT_EQ(j.state, JobState::kFailed);
  EXPECT_NE(j.reason.find("after 1 restarts"), std::string::npos) << j.reason;
}

TEST_F(ControlPlaneTest, BadInputFromATaskFailsTheJobAtOnce) {
  auto cp = make();
  cp->register_node(node("a", "cpu_ref", 1));
  const auto id = cp->submit(train(1), "").first.id;
  cp->tick();
  const auto work = beat(*cp, "a");
  cp->report_task("a", TaskReport{work[0].task.id, TaskState::kFailed, 2, "exited 2", {}, "", ""});
  EXPECT_EQ(cp->get_job(id).state, JobState::kFailed);
}

TEST_F(ControlPlaneTest, ANodeWithoutHeartbeatsIsLostAndItsJobMoves) {
  auto cp = make();
  cp->register_node(node("a", "cpu_ref", 1));
  cp->register_node(node("b", "cpu_ref", 1));
  const auto id = cp->submit(train(1), "").first.id;
  cp->tick();
  const std::string first_node = cp->get_job(id).placement.at(0).node;
  const std::string other = first_node == "a" ? "b" : "a";
  now_ += 3;
  beat(*cp, other);
  now_ += 3;  // 6 s since the first node's last heartbeat
  cp->tick();
  const auto nodes = cp->list_nodes();
  for (const auto& n : nodes) EXPECT_EQ(n.state, n.name == first_node ? NodeState::kLost : NodeState::kReady);
  cp->tick();
  const auto j = cp->get_job(id);
  EXPECT_EQ(j.state, JobState::kRunning);
  EXPECT_EQ(j.placement.at(0).node, other);
  EXPECT_EQ(j.restarts, 1);
}

TEST_F(ControlPlaneTest, AnUnhealthyDeviceIsNotUsedAgain) {
  auto cp = make();
  cp->register_node(node("a", "cpu_ref", 2));
  Heartbeat hb;
  hb.node = "a";
  auto n = node("a", "cpu_ref", 2);
  n.devices[0].health = gpulab::inventory::Health::unhealthy("Xid 79: GPU has fallen off the bus");
  hb.devices = n.devices;
  cp->heartbeat(hb, std::chrono::milliseconds(0));
  const auto id = cp->submit(train(1), "").first.id;
  cp->tick();
  EXPECT_EQ(cp->get_job(id).placement.at(0).device, "cpu_ref:1");
  const auto id2 = cp->submit(train(1), "").first.id;
  cp->tick();
  EXPECT_EQ(cp->get_job(id2).state, JobState::kPending);
}

TEST_F(ControlPlaneTest, EverythingSurvivesARestartFromTheStateDirectory) {
  std::string pending;
  std::string running;
  {
    auto cp = make();
    cp->register_node(node("a", "cpu_ref", 1));
    running = cp->submit(train(1), "key-r").first.id;
    pending = cp->submit(train(1), "key-p").first.id;
    cp->tick();
    cp->drain("a");
  }  // the process ends here as far as the state is concerned
  auto cp = make();
  EXPECT_EQ(cp->get_job(running).state, JobState::kRunning);
  EXPECT_EQ(cp->get_job(pending).state, JobState::kPending);
  EXPECT_EQ(cp->submit(train(1), "key-p").first.id, pending);  // keys survive too
  const auto nodes = cp->list_nodes();
  ASSERT_EQ(nodes.size(), 1U);
  EXPECT_TRUE(nodes[0].draining);
  EXPECT_EQ(cp->tasks_of(running).size(), 1U);
  // New ids continue after the old ones.
  const auto next = cp->submit(train(1), "").first.id;
  EXPECT_GT(next, pending);
}

TEST_F(ControlPlaneTest, CancelStopsTheTasksAndRefusesTwice) {
  auto cp = make();
  cp->register_node(node("a", "cpu_ref", 1));
  const auto id = cp->submit(train(1), "").first.id;
  cp->tick();
  ASSERT_EQ(beat(*cp, "a").size(), 1U);
  EXPECT_EQ(cp->cancel(id).state, JobState::kCancelled);
  EXPECT_TRUE(beat(*cp, "a").empty());
  try {
    cp->cancel(id);
    FAIL();
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 409);
  }
}

TEST_F(ControlPlaneTest, MetricsAreValidExposition) {
  auto cp = make();
  cp->register_node(node("a", "cpu_ref", 2));
  cp->submit(train(1), "");
  cp->tick();
  const auto text = cp->metrics();
  EXPECT_NE(text.find("gpulab_platform_jobs{state=\"running\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("gpulab_platform_devices{state=\"allocated\"} 1"), std::string::npos) << text;
  EXPECT_NE(text.find("gpulab_platform_placement_latency_seconds_count 1"), std::string::npos) << text;
  EXPECT_NE(text.find("gpulab_platform_license_state{state=\"COMMUNITY\"} 1"), std::string::npos) << text;
}

TEST_F(ControlPlaneTest, ANewerSchemaOrAGarbageDatabaseIsRefused) {
  { std::ofstream(dir_ / "platform.db") << "this is not a database, it is a text file of some length........"; }
  EXPECT_THROW(make(), gpulab::UsageError);
}

TEST_F(ControlPlaneTest, APendingJobsReasonAlwaysDescribesTheCurrentState) {
  auto cp = make();
  cp->register_node(node("a", "cpu_ref", 2));
  const auto id = cp->submit(train(2), "").first.id;
  cp->tick();
  auto work = beat(*cp, "a");
  ASSERT_EQ(work.size(), 2U);
  cp->report_task("a", TaskReport{work[1].task.id, TaskState::kFailed, 1, "exited 1", {}, "", ""});
  cp->drain("a");
  cp->tick();
  const std::string restarting = "restarting: rank 1 on a exited 1: exited 1";
  EXPECT_EQ(cp->get_job(id).reason, restarting + " — needs 2 devices of cpu_ref; the cluster has 0 schedulable");
  // The cluster changed: so does the reason (it used to keep the first one).
  cp->register_node(node("b", "cpu_ref", 1));
  cp->tick();
  EXPECT_EQ(cp->get_job(id).reason, restarting + " — needs 2 devices of cpu_ref; the cluster has 1 schedulable");
  cp->register_node(node("c", "cpu_ref", 2));
  cp->tick();
  const auto placed = cp->get_job(id);
  EXPECT_EQ(placed.state, JobState::kRunning);
  EXPECT_EQ(placed.reason, "placed (attempt 2: 1 restarts, 0 preemptions)");
  EXPECT_TRUE(placed.requeued_because.empty());
  // And it stays so across a restart of the control plane.
  cp.reset();
  cp = make();
  cp->tick();
  EXPECT_EQ(cp->get_job(id).reason, "placed (attempt 2: 1 restarts, 0 preemptions)");
}

TEST_F(ControlPlaneTest, AHigherPriorityJobPreemptsALowerOneWhichResumesAfterIt) {
  auto cp = make();
  cp->register_node(node("a", "cpu_ref", 1));
  const auto low = cp->submit(train(1), "").first.id;
  cp->tick();
  auto work = beat(*cp, "a");
  ASSERT_EQ(work.size(), 1U);
  const auto low_task = work[0].task.id;
  beat(*cp, "a", {TaskReport{low_task, TaskState::kRunning, -1, "", {}, {}, "process"}});
  Json spec = train(1);
  spec["priority"] = 10;
  const auto high = cp->submit(spec, "").first.id;
  cp->tick();
  EXPECT_EQ(cp->get_job(high).state, JobState::kRunning);
  auto l = cp->get_job(low);
  EXPECT_EQ(l.state, JobState::kPending);
  EXPECT_EQ(l.preemptions, 1);
  EXPECT_EQ(l.restarts, 0);  // a preemption is not a failure: it does not use up max_restarts
  EXPECT_EQ(l.reason, "preempted by " + high + " (priority 10 > 0) — waiting for the next scheduling pass");
  cp->tick();  // the next pass: still no room, and the reason says so
  EXPECT_EQ(cp->get_job(low).reason,
            "preempted by " + high + " (priority 10 > 0) — waiting for 1 free devices of cpu_ref (1 schedulable, busy now)");
  const auto tasks = cp->tasks_of(low);
  ASSERT_EQ(tasks.size(), 1U);
  EXPECT_EQ(tasks[0].state, TaskState::kCancelled);
  EXPECT_NE(tasks[0].message.find("preempted by " + high), std::string::npos);
  // The node now runs only the high-priority task.
  work = beat(*cp, "a", {TaskReport{low_task, TaskState::kRunning, -1, "", {}, {}, "process"}});
  ASSERT_EQ(work.size(), 1U);
  EXPECT_EQ(work[0].task.job, high);
  cp->report_task("a", TaskReport{work[0].task.id, TaskState::kSucceeded, 0, "exited 0", {}, "", ""});
  cp->tick();
  l = cp->get_job(low);
  EXPECT_EQ(l.state, JobState::kRunning);
  EXPECT_EQ(l.attempt, 2);
  work = beat(*cp, "a");
  ASSERT_EQ(work.size(), 1U);
  // Attempt 2 reads the same checkpoint directory: train resumes where it was.
  const auto& argv = work[0].argv;
  const auto arg = [&](const std::string& flag) {
    const auto it = std::find(argv.begin(), argv.end(), flag);
    return it == argv.end() || it + 1 == argv.end() ? std::string() : *(it + 1);
  };
  EXPECT_EQ(arg("--attempt"), "2");
  EXPECT_EQ(arg("--checkpoint-dir"), (dir_ / "checkpoints" / low).string());
  EXPECT_NE(cp->metrics().find("gpulab_platform_preemptions_total 1"), std::string::npos);
}

TEST_F(ControlPlaneTest, PreemptionCanBeTurnedOff) {
  ControlOptions o;
  o.state_dir = dir_;
  o.public_url = "http://127.0.0.1:1";
  o.clock = [this] { return now_; };
  o.preempt = false;
  ControlPlane cp(o);
  cp.register_node(node("a", "cpu_ref", 1));
  const auto low = cp.submit(train(1), "").first.id;
  cp.tick();
  Json spec = train(1);
  spec["priority"] = 10;
  const auto high = cp.submit(spec, "").first.id;
  cp.tick();
  EXPECT_EQ(cp.get_job(low).state, JobState::kRunning);
  EXPECT_EQ(cp.get_job(high).state, JobState::kPending);
}

}  // namespace

namespace {

TEST_F(ControlPlaneTest, AServeJobRunsUntilCancelledAndReportsItsEndpointOnceHealthy) {
  auto cp = make_licensed("serving");
  cp->register_node(node("a", "fast", 1));
  const auto [job, created] = cp->submit(
      Json{{"name", "chat"}, {"kind", "serve"}, {"backend", "fast"}, {"params", Json{{"model", "tiny"}, {"kv_blocks", 64}}}},
      "");
  cp->tick();
  auto j = cp->get_job(job.id);
  ASSERT_EQ(j.state, JobState::kRunning);
  EXPECT_EQ(j.reason, "placed; the server starts, waiting for its GET /health");
  auto work = beat(*cp, "a");
  ASSERT_EQ(work.size(), 1U);
  EXPECT_EQ(work[0].program, "gpulab-serve");
  const std::vector<std::string> argv{"--model",       "tiny", "--backend",     "fast", "--block-size",
                                      "16",            "--kv-blocks", "64",       "--max-running", "32",
                                      "--max-batched-tokens", "256", "--max-waiting", "64"};
  EXPECT_EQ(work[0].argv, argv);  // no --listen: the agent picks the port
  const std::string id = work[0].task.id;

  // Started, not yet answering /health: no endpoint.
  beat(*cp, "a", {TaskReport{id, TaskState::kRunning, -1, "", {}, {}, "process"}});
  EXPECT_EQ(cp->get_job(job.id).endpoint, "");
  TaskReport healthy{id, TaskState::kRunning, -1, "", {}, {}, "process"};
  healthy.endpoint = "http://127.0.0.1:8123";
  beat(*cp, "a", {healthy});
  j = cp->get_job(job.id);
  EXPECT_EQ(j.endpoint, "http://127.0.0.1:8123");
  EXPECT_EQ(j.reason, "serving at http://127.0.0.1:8123 (a fast:0)");
  EXPECT_EQ(cp->tasks_of(job.id).at(0).endpoint, "http://127.0.0.1:8123");

  // Prometheus finds the agent and the server.
  const auto targets = prometheus_targets(cp->list_nodes(), cp->list_jobs());
  ASSERT_EQ(targets.size(), 2U) << targets.dump();
  EXPECT_EQ(targets.at(0).at("labels").at("job"), "gpulabd-agent");
  EXPECT_EQ(targets.at(1).at("targets"), Json::array({"127.0.0.1:8123"}));
  EXPECT_EQ(targets.at(1).at("labels"), (Json{{"job", "gpulab-serve"}, {"gpulab_job", job.id},
                                              {"gpulab_job_name", "chat"}, {"node", "a"}, {"device", "fast:0"},
                                              {"model", "tiny"}}));

  // A server that exits, even with 0, has stopped serving: a restart, not a success.
  cp->report_task("a", TaskReport{id, TaskState::kSucceeded, 0, "exited 0", {}, "", "process"});
  j = cp->get_job(job.id);
  EXPECT_EQ(j.state, JobState::kPending);
  EXPECT_EQ(j.restarts, 1);
  EXPECT_EQ(j.endpoint, "");
  EXPECT_NE(j.reason.find("the server exited 0: a serve job runs until cancelled"), std::string::npos) << j.reason;
  EXPECT_EQ(prometheus_targets(cp->list_nodes(), cp->list_jobs()).size(), 1U);
  cp->tick();
  work = beat(*cp, "a");
  ASSERT_EQ(work.size(), 1U);
  EXPECT_EQ(work[0].task.attempt, 2);
  healthy.id = work[0].task.id;
  healthy.endpoint = "http://127.0.0.1:8124";
  beat(*cp, "a", {healthy});

  // The endpoint survives a control-plane restart; a cancel clears it.
  cp.reset();
  cp = make_licensed("serving");
  EXPECT_EQ(cp->get_job(job.id).endpoint, "http://127.0.0.1:8124");
  j = cp->cancel(job.id);
  EXPECT_EQ(j.state, JobState::kCancelled);
  EXPECT_EQ(j.endpoint, "");
  EXPECT_TRUE(beat(*cp, "a").empty());
}

TEST_F(ControlPlaneTest, ALicenceWithoutServingRefusesServeJobsWith403) {
  auto cp = make_licensed("training");
  try {
    cp->submit(Json{{"name", "chat"}, {"kind", "serve"}, {"params", Json{{"model", "tiny"}}}}, "");
    FAIL() << "admitted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 403);
    EXPECT_EQ(std::string(e.what()), "the licence does not include the 'serving' feature that serve jobs need");
  }
  EXPECT_TRUE(cp->list_jobs().empty());
}

}  // namespace
