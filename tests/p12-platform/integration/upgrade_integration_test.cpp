// The upgrade drill with the real gpulabd (docs/release/rolling-upgrade.md): a control plane
// at this build's protocol N starts on a state database an older build left (schema 1),
// writes its copy first and migrates it; agents of protocol N-1 (their messages sent over
// HTTP byte for byte as protocol 1 wrote them) and of N (a real agent) work side by side;
// an N-2 agent is refused naming both versions. A migration that fails stops gpulabd with one
// error line and leaves the database as it was.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "gpulab/errors.hpp"
#include "gpulab_test/program_run.hpp"
#include "platform/api_client.hpp"
#include "platform/control_plane.hpp"
#include "platform/local_cluster.hpp"
#include "platform/store.hpp"

namespace {

using gpulab::Json;
using namespace platform;
using namespace std::chrono_literals;

// A schema 1 database, as the build before the shared inventory wrote it, plus `more_sql`. Its
// one node is drained, so nothing is placed on an agent that will never come back.
void plant_schema1(const std::filesystem::path& dir, const std::string& more_sql = "") {
  std::filesystem::create_directories(dir);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir / "platform.db").c_str(), &db), SQLITE_OK);
  const std::string text =
      R"(CREATE TABLE jobs (id TEXT PRIMARY KEY, seq INTEGER NOT NULL, state TEXT NOT NULL, idem TEXT, doc TEXT NOT NULL);
         CREATE TABLE tasks (id TEXT PRIMARY KEY, job TEXT NOT NULL, doc TEXT NOT NULL);
         CREATE TABLE nodes (name TEXT PRIMARY KEY, doc TEXT NOT NULL);
         INSERT INTO nodes VALUES ('retired', '{"name":"retired","address":"http://127.0.0.1:9","state":"draining",
           "draining":true,"heartbeat_age_s":-1.0,"protocol":1,"isolation":"process","devices":[
           {"id":"cpu_ref:0","backend":"cpu_ref","index":0,"healthy":true,"health_reason":"","dtypes":["f32"]}],
           "last_heartbeat":12.5}');
         PRAGMA user_version=1;)" +
      more_sql;
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, text.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

std::string bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

template <typename F>
bool wait_until(F&& ok, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!ok()) {
    if (std::chrono::steady_clock::now() > end) return ok();
    std::this_thread::sleep_for(50ms);
  }
  return true;
}

class UpgradeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpulab-upgrade-it-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

// A protocol 1 device: {id, backend, index, healthy, health_reason, dtypes}.
Json v1_device(const std::string& backend, int index) {
  return Json{{"id", backend + ":" + std::to_string(index)},
              {"backend", backend},
              {"index", index},
              {"healthy", true},
              {"health_reason", ""},
              {"dtypes", {"f32"}}};
}

TEST_F(UpgradeTest, ANewControlPlaneMigratesTheOldStateAndWorksWithOldAndNewAgents) {
  static_assert(kProtocolVersion == 2,
                "the N-1 agent below speaks protocol 1: update it with the protocol");
  LocalCluster cluster(GPULAB_BIN_DIR, dir_);
  plant_schema1(cluster.state_dir());
  cluster.start_control({"--node-timeout-ms", "60000"});
  ApiClient api(cluster.control_url());

  // Migrated on start, the copy first.
  const auto backup = Store::backup_path(cluster.state_dir(), 1);
  EXPECT_TRUE(std::filesystem::exists(backup));
  const Json version = api.get("/v1/version");
  EXPECT_EQ(version.at("protocol"), kProtocolVersion);
  bool retired_listed = false;
  for (const auto& n : api.get("/v1/nodes")) retired_listed |= n.at("name") == "retired";
  EXPECT_TRUE(retired_listed) << "the schema 1 node row did not survive the migration";

  // An agent one protocol older: registration and heartbeats in its own words.
  const Json registration{{"name", "old-agent"},
                          {"address", "http://127.0.0.1:9"},
                          {"protocol", 1},
                          {"isolation", "process"},
                          {"devices", Json::array({v1_device("fast", 0)})}};
  api.post("/v1/nodes/register", registration.dump());
  const Json beat{{"devices", Json::array({v1_device("fast", 0)})}, {"tasks", Json::array()}};
  EXPECT_TRUE(api.post("/v1/nodes/old-agent/heartbeat", beat.dump()).at("tasks").empty());

  // A real agent of this build beside it.
  cluster.start_agent("new-agent", "cpu_ref:1", {"--heartbeat-ms", "200", "--no-certify"});
  ASSERT_TRUE(wait_until([&] { return node_state(api, "new-agent") == "ready"; }, 30s));

  // Work for each: cpu_ref only the new agent has, fast only the old one.
  const auto on_new =
      api.post("/v1/jobs",
               R"({"name": "n", "kind": "matmul", "backend": "cpu_ref", "params": {"n": 32}})")
          .at("id");
  const auto on_old =
      api.post("/v1/jobs",
               R"({"name": "o", "kind": "matmul", "backend": "fast", "params": {"n": 32}})")
          .at("id");
  Json assignment;
  ASSERT_TRUE(wait_until(
      [&] {
        const Json tasks = api.post("/v1/nodes/old-agent/heartbeat", beat.dump()).at("tasks");
        if (tasks.empty()) return false;
        assignment = tasks.at(0);
        return true;
      },
      30s));
  EXPECT_EQ(assignment.at("job"), on_old);
  EXPECT_EQ(assignment.at("device"), "fast:0");
  const Json done{{"id", assignment.at("id")},
                  {"node", "old-agent"},
                  {"state", "succeeded"},
                  {"exit_code", 0},
                  {"message", "exited 0"}};
  api.post("/v1/tasks/" + assignment.at("id").get<std::string>() + "/status", done.dump());
  EXPECT_EQ(wait_for_job(api, on_old.get<std::string>(), {"succeeded", "failed"}, 30s).at("state"),
            "succeeded");
  EXPECT_EQ(wait_for_job(api, on_new.get<std::string>(), {"succeeded", "failed"}, 60s).at("state"),
            "succeeded");

  // Two protocols back is outside the window.
  Json too_old = registration;
  too_old["name"] = "ancient";
  too_old["protocol"] = kProtocolVersion - 2;
  try {
    api.post("/v1/nodes/register", too_old.dump());
    FAIL() << "a protocol " << kProtocolVersion - 2 << " agent was accepted";
  } catch (const gpulab::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "protocol: agent speaks version 0, this control plane version 2 (accepts "
                  "agents of versions 1 to 2)"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(UpgradeTest, AFailedMigrationStopsGpulabdWithOneLineAndLeavesTheStateAlone) {
  const auto state = dir_ / "state";
  plant_schema1(state, "CREATE TABLE jobs_idem (x);");
  const std::string before = bytes(state / "platform.db");
  const auto r = gpulab_test::run_program(
      "gpulabd", "control --state " + state.string() + " --listen 127.0.0.1:0");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "gpulabd: error: --state '" + state.string() +
                "': migrating schema 1 to 2 failed (state database: there is already a table named "
                "jobs_idem); platform.db is unchanged, a copy is in platform.db.schema-1.bak\n");
  EXPECT_TRUE(bytes(state / "platform.db") == before) << "platform.db changed";
}

}  // namespace
