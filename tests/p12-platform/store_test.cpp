// The state database across schema versions: a database the previous build
// wrote (schema 1: devices as {id, backend, index, healthy, health_reason,
// dtypes}) opens, and its nodes come back as inventory accelerators.
#include "platform/store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>

namespace {

using namespace platform;

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpulab-store-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void sql(const std::string& text) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir_ / "platform.db").c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(db, text.c_str(), nullptr, nullptr, &err);
    EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
  }

  int user_version() {
    sqlite3* db = nullptr;
    sqlite3_open((dir_ / "platform.db").c_str(), &db);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, nullptr);
    sqlite3_step(st);
    const int v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
  }

  std::filesystem::path dir_;
};

TEST_F(StoreTest, ASchema1DatabaseIsMigratedAndItsDevicesBecomeAccelerators) {
  // What schema 1 wrote for node-a: cpu_ref:0 unhealthy, fast:0 certified.
  sql(R"(CREATE TABLE jobs (id TEXT PRIMARY KEY, seq INTEGER NOT NULL, state TEXT NOT NULL, idem TEXT, doc TEXT NOT NULL);
         CREATE TABLE tasks (id TEXT PRIMARY KEY, job TEXT NOT NULL, doc TEXT NOT NULL);
         CREATE TABLE nodes (name TEXT PRIMARY KEY, doc TEXT NOT NULL);
         INSERT INTO nodes VALUES ('node-a', '{"name":"node-a","address":"http://127.0.0.1:9","state":"ready",
           "draining":true,"heartbeat_age_s":-1.0,"protocol":1,"isolation":"process","devices":[
           {"id":"cpu_ref:0","backend":"cpu_ref","index":0,"healthy":false,"health_reason":"Xid 79","dtypes":["f32"]},
           {"id":"fast:0","backend":"fast","index":0,"healthy":true,"health_reason":"","dtypes":["f32"]}],
           "last_heartbeat":12.5}');
         PRAGMA user_version=1;)");
  {
    Store store(dir_, Durability::kProcessCrash);
    const auto nodes = store.load_nodes();
    ASSERT_EQ(nodes.size(), 1U);
    const Node& n = nodes[0];
    EXPECT_TRUE(n.draining);
    EXPECT_EQ(n.last_heartbeat, 12.5);
    ASSERT_EQ(n.devices.size(), 2U);
    EXPECT_EQ(n.devices[0].id, "cpu_ref:0");
    EXPECT_EQ(n.devices[0].health, gpulab::inventory::Health::unhealthy("Xid 79"));
    EXPECT_EQ(n.devices[1].id, "fast:0");
    EXPECT_EQ(n.devices[1].index, 1);  // node ordinals now: unique on the node
    EXPECT_EQ(n.devices[1].dtypes, std::vector<std::string>{"f32"});
    ASSERT_NE(n.devices[1].link_to("cpu_ref:0"), nullptr);
  }
  EXPECT_EQ(user_version(), Store::kSchemaVersion);
  Store again(dir_, Durability::kProcessCrash);  // the migrated rows read as schema 2
  EXPECT_EQ(again.load_nodes().at(0).devices.at(0).health.reason, "Xid 79");
}

TEST_F(StoreTest, AJobKeepsItsTopologyEstimate) {
  Job j;
  j.id = "j-000001";
  j.seq = 1;
  j.spec.name = "t";
  j.spec.kind = JobKind::kTrain;
  j.spec.gpus = 2;
  j.topology.ranks = 2;
  j.topology.bytes = 22032;
  j.topology.allreduce_s = 4e-5;
  j.topology.bottleneck = "nvlink";
  j.topology.nodes = 1;
  j.topology.islands = 1;
  j.topology.considered = 2;
  j.topology.next_best_s = 3e-3;
  j.topology.reason = "why";
  {
    Store store(dir_, Durability::kProcessCrash);
    store.put_job(j);
  }
  Store store(dir_, Durability::kProcessCrash);
  const auto t = store.load_jobs().at(0).topology;
  EXPECT_EQ(t.bottleneck, "nvlink");
  EXPECT_EQ(t.next_best_s, 3e-3);
  EXPECT_EQ(t.reason, "why");
}

}  // namespace
