// The control plane's state in SQLite (WAL mode) under --state DIR: jobs,
// tasks and nodes, each row a JSON document plus the columns it is looked up
// by. Every accepted job is committed before the API answers, so a kill -9 of
// the control plane loses nothing it acknowledged.
//
// Durability: WAL with synchronous=NORMAL survives the process dying at any
// point (the WAL is in the OS page cache); synchronous=FULL (Durability::kFsync)
// also survives power loss, at one fsync per commit.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "platform/model.hpp"

namespace platform {

enum class Durability { kProcessCrash, kFsync };

class Store {
 public:
  // The schema version this build writes (PRAGMA user_version). 2: node rows
  // hold the shared inventory's accelerators; a version 1 database is
  // migrated when it is opened (its device rows rewritten, nothing else).
  static constexpr int kSchemaVersion = 2;

  // Opens or creates DIR/platform.db. Throws gpulab::UsageError when the
  // directory cannot be created, the file is not a gpulab database or its
  // schema is newer than this build's. An older schema is migrated forward:
  // first a copy of the database as it is goes to backup_path(DIR, old
  // version) (SQLite's online backup), then every step runs in one
  // transaction. A migration that fails throws gpulab::RunError with one line
  // naming both versions and leaves platform.db byte for byte as it was.
  Store(const std::filesystem::path& dir, Durability durability);

  // DIR/platform.db.schema-N.bak: the copy taken before migrating schema N.
  static std::filesystem::path backup_path(const std::filesystem::path& dir, int schema);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Runs `body` in one transaction (IMMEDIATE; rolled back if it throws).
  void transaction(const std::function<void()>& body);

  void put_job(const Job& job);
  void put_task(const Task& task);
  void put_node(const Node& node);

  [[nodiscard]] std::vector<Job> load_jobs();
  [[nodiscard]] std::vector<Task> load_tasks();
  [[nodiscard]] std::vector<Node> load_nodes();
  [[nodiscard]] std::int64_t max_job_seq();

 private:
  void exec(const char* sql);
  void open_schema(const std::filesystem::path& dir, Durability durability);
  void write_backup(const std::filesystem::path& to);
  void migrate(const std::filesystem::path& dir, int from);
  void migrate_nodes_from_v1();
  sqlite3* db_ = nullptr;
  sqlite3_stmt* put_job_ = nullptr;
  sqlite3_stmt* put_task_ = nullptr;
  sqlite3_stmt* put_node_ = nullptr;
};

// The JSON a store row holds, and back (the store's own format; a row that
// does not parse means the database was edited by hand: RunError).
gpulab::Json job_record(const Job& job);
Job job_from_record(const gpulab::Json& j);
gpulab::Json task_record(const Task& t);
Task task_from_record(const gpulab::Json& j);
gpulab::Json node_record(const Node& n);
Node node_from_record(const gpulab::Json& j);
// A schema 1 node row, its devices described as accelerators (HAL devices
// with nominal links) until the node's agent registers again.
Node node_from_v1_record(const gpulab::Json& j);

}  // namespace platform
