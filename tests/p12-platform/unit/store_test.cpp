// The state database across schema versions: a database the previous build
// wrote (schema 1: devices as {id, backend, index, healthy, health_reason,
// dtypes}) opens, and its nodes come back as inventory accelerators; a copy of
// it is written before it is migrated; a migration that fails leaves it byte
// for byte as it was, with one line that says so.
#include "platform/store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "gpulab/errors.hpp"

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

  // What schema 1 wrote for node-a: cpu_ref:0 unhealthy, fast:0 certified.
  void plant_schema1(const std::string& more_sql = "") {
    sql(R"(CREATE TABLE jobs (id TEXT PRIMARY KEY, seq INTEGER NOT NULL, state TEXT NOT NULL, idem TEXT, doc TEXT NOT NULL);
           CREATE TABLE tasks (id TEXT PRIMARY KEY, job TEXT NOT NULL, doc TEXT NOT NULL);
           CREATE TABLE nodes (name TEXT PRIMARY KEY, doc TEXT NOT NULL);
           INSERT INTO nodes VALUES ('node-a', '{"name":"node-a","address":"http://127.0.0.1:9","state":"ready",
             "draining":true,"heartbeat_age_s":-1.0,"protocol":1,"isolation":"process","devices":[
             {"id":"cpu_ref:0","backend":"cpu_ref","index":0,"healthy":false,"health_reason":"Xid 79","dtypes":["f32"]},
             {"id":"fast:0","backend":"fast","index":0,"healthy":true,"health_reason":"","dtypes":["f32"]}],
             "last_heartbeat":12.5}');
           PRAGMA user_version=1;)" +
        more_sql);
  }

  static std::string bytes(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }

  static std::string query(const std::filesystem::path& db_path, const char* text) {
    sqlite3* db = nullptr;
    sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
    sqlite3_stmt* st = nullptr;
    std::string out;
    if (sqlite3_prepare_v2(db, text, -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
      const auto* p = sqlite3_column_text(st, 0);
      out = p ? reinterpret_cast<const char*>(p) : "";
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
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
  plant_schema1();
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

TEST_F(StoreTest, ACopyOfTheOldDatabaseIsWrittenBeforeItIsMigrated) {
  plant_schema1();
  const auto backup = Store::backup_path(dir_, 1);
  EXPECT_EQ(backup, dir_ / "platform.db.schema-1.bak");
  const std::string old_row = query(dir_ / "platform.db", "SELECT doc FROM nodes");
  ASSERT_NE(old_row.find(R"("healthy":false)"), std::string::npos);
  { Store store(dir_, Durability::kProcessCrash); }
  EXPECT_EQ(user_version(), Store::kSchemaVersion);
  ASSERT_TRUE(std::filesystem::exists(backup));
  // The copy is the database as schema 1 left it: its version, its rows in the old form.
  EXPECT_EQ(query(backup, "PRAGMA user_version"), "1");
  EXPECT_EQ(query(backup, "SELECT doc FROM nodes"), old_row);
  EXPECT_EQ(query(backup, "PRAGMA integrity_check"), "ok");
  EXPECT_FALSE(std::filesystem::exists(backup.string() + ".tmp"));
  // A database at the current schema is opened without another copy.
  std::filesystem::remove(backup);
  { Store again(dir_, Durability::kProcessCrash); }
  EXPECT_FALSE(std::filesystem::exists(backup));
}

TEST_F(StoreTest, AFailedMigrationLeavesTheOldStateByteForByte) {
  // A table where schema 2 puts its idempotency index: the migration's CREATE INDEX fails
  // after the node rows were already rewritten inside the transaction.
  plant_schema1("CREATE TABLE jobs_idem (x);");
  const auto db = dir_ / "platform.db";
  const std::string before = bytes(db);
  ASSERT_FALSE(before.empty());
  std::string message;
  try {
    Store store(dir_, Durability::kProcessCrash);
    FAIL() << "the migration succeeded";
  } catch (const gpulab::RunError& e) {
    message = e.what();
  }
  EXPECT_EQ(message,
            "--state '" + dir_.string() +
                "': migrating schema 1 to 2 failed (state database: there is already a table named "
                "jobs_idem); platform.db is unchanged, a copy is in platform.db.schema-1.bak");
  EXPECT_EQ(message.find('\n'), std::string::npos);
  EXPECT_TRUE(bytes(db) == before) << "platform.db changed";
  EXPECT_EQ(user_version(), 1);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "platform.db-journal"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "platform.db-wal"));
  EXPECT_EQ(query(Store::backup_path(dir_, 1), "PRAGMA user_version"), "1");
  // Again: the same refusal, still nothing changed.
  EXPECT_THROW(Store(dir_, Durability::kProcessCrash), gpulab::RunError);
  EXPECT_TRUE(bytes(db) == before);
}

TEST_F(StoreTest, ANewerSchemaIsRefusedAndLeftAlone) {
  sql("CREATE TABLE t (x); PRAGMA user_version=3;");
  const std::string before = bytes(dir_ / "platform.db");
  try {
    Store store(dir_, Durability::kProcessCrash);
    FAIL() << "a schema 3 database was opened";
  } catch (const gpulab::UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--state '" + dir_.string() + "': schema version 3 is newer than this build's 2");
  }
  EXPECT_TRUE(bytes(dir_ / "platform.db") == before);
  EXPECT_FALSE(std::filesystem::exists(Store::backup_path(dir_, 3)));
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
