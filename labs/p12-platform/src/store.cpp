#include "platform/store.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <system_error>

#include "gpulab/errors.hpp"
#include "platform/inventory.hpp"

namespace platform {
namespace {

using gpulab::Json;

class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) {
    if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK) {
      throw gpulab::RunError(fmt::format("state database: {}", sqlite3_errmsg(db)));
    }
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  sqlite3_stmt* get() { return s_; }

 private:
  sqlite3_stmt* s_ = nullptr;
};

void check(sqlite3* db, int rc, const char* what) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
    throw gpulab::RunError(fmt::format("state database: {}: {}", what, sqlite3_errmsg(db)));
  }
}

void bind_text(sqlite3_stmt* s, int i, const std::string& v) {
  sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}

std::string column_text(sqlite3_stmt* s, int i) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, i));
  return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(s, i))) : std::string();
}

std::vector<Json> load_docs(sqlite3* db, const char* sql) {
  Stmt st(db, sql);
  std::vector<Json> out;
  int rc = 0;
  while ((rc = sqlite3_step(st.get())) == SQLITE_ROW) {
    try {
      out.push_back(Json::parse(column_text(st.get(), 0)));
    } catch (const Json::exception& e) {
      throw gpulab::RunError(fmt::format("state database: a row does not parse: {}", e.what()));
    }
  }
  check(db, rc, "load");
  return out;
}

// The tables of the current schema (IF NOT EXISTS: a new database, or the
// first step of a migration).
constexpr const char* kCreateTables =
    "CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, seq INTEGER NOT NULL,"
    " state TEXT NOT NULL, idem TEXT, doc TEXT NOT NULL);"
    "CREATE UNIQUE INDEX IF NOT EXISTS jobs_idem ON jobs(idem) WHERE idem IS NOT NULL;"
    "CREATE TABLE IF NOT EXISTS tasks (id TEXT PRIMARY KEY, job TEXT NOT NULL, doc TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS nodes (name TEXT PRIMARY KEY, doc TEXT NOT NULL);";

}  // namespace

Store::Store(const std::filesystem::path& dir, Durability durability) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw gpulab::UsageError(fmt::format("--state '{}': {}", dir.string(), ec.message()));
  if (!std::filesystem::is_directory(dir)) {
    throw gpulab::UsageError(fmt::format("--state '{}': not a directory", dir.string()));
  }
  const auto path = dir / "platform.db";
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw gpulab::UsageError(fmt::format("--state '{}': cannot open platform.db: {}", dir.string(), msg));
  }
  sqlite3_busy_timeout(db_, 5000);
  try {
    open_schema(dir, durability);
  } catch (...) {
    sqlite3_finalize(put_job_);
    sqlite3_finalize(put_task_);
    sqlite3_finalize(put_node_);
    sqlite3_close(db_);
    throw;
  }
}

// Nothing before the migration writes to the file (not even journal_mode=WAL, which
// rewrites the header), so a database this build refuses, or fails to migrate, is left
// byte for byte as it was.
void Store::open_schema(const std::filesystem::path& dir, Durability durability) {
  int version = 0;
  try {
    // Fails here, not later, when the file is not a database at all.
    Stmt st(db_, "PRAGMA user_version");
    check(db_, sqlite3_step(st.get()), "read the schema version");
    version = sqlite3_column_int(st.get(), 0);
  } catch (const gpulab::RunError& e) {
    throw gpulab::UsageError(fmt::format("--state '{}': {}", dir.string(), e.what()));
  }
  if (version > kSchemaVersion) {
    throw gpulab::UsageError(fmt::format("--state '{}': schema version {} is newer than this build's {}",
                                         dir.string(), version, kSchemaVersion));
  }
  if (version > 0 && version < kSchemaVersion) migrate(dir, version);
  exec("PRAGMA journal_mode=WAL");
  exec(durability == Durability::kFsync ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
  exec(kCreateTables);
  exec(fmt::format("PRAGMA user_version={}", kSchemaVersion).c_str());
  check(db_,
        sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO jobs(id, seq, state, idem, doc) VALUES (?1, ?2, ?3, ?4, ?5)",
                           -1, &put_job_, nullptr),
        "prepare");
  check(db_, sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO tasks(id, job, doc) VALUES (?1, ?2, ?3)", -1,
                                &put_task_, nullptr),
        "prepare");
  check(db_, sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO nodes(name, doc) VALUES (?1, ?2)", -1, &put_node_,
                                nullptr),
        "prepare");
}

std::filesystem::path Store::backup_path(const std::filesystem::path& dir, int schema) {
  return dir / fmt::format("platform.db.schema-{}.bak", schema);
}

void Store::write_backup(const std::filesystem::path& to) {
  // SQLite's online backup into a temporary name, renamed when whole: a crash
  // mid-copy never leaves a partial file under the backup's name.
  const auto tmp = std::filesystem::path(to.string() + ".tmp");
  std::error_code ec;
  std::filesystem::remove(tmp, ec);  // a leftover of a crash mid-copy
  sqlite3* out = nullptr;
  std::string error;
  if (sqlite3_open_v2(tmp.c_str(), &out, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    error = out ? sqlite3_errmsg(out) : "out of memory";
  } else if (sqlite3_backup* b = sqlite3_backup_init(out, "main", db_, "main")) {
    const int rc = sqlite3_backup_step(b, -1);
    sqlite3_backup_finish(b);
    if (rc != SQLITE_DONE) error = sqlite3_errmsg(out);
  } else {
    error = sqlite3_errmsg(out);
  }
  sqlite3_close(out);
  if (error.empty()) std::filesystem::rename(tmp, to, ec);
  if (!error.empty() || ec) {
    std::filesystem::remove(tmp, ec);
    throw gpulab::RunError(fmt::format("cannot write the backup '{}': {}", to.string(),
                                       error.empty() ? ec.message() : error));
  }
}

void Store::migrate(const std::filesystem::path& dir, int from) {
  const auto backup = backup_path(dir, from);
  try {
    write_backup(backup);
  } catch (const gpulab::RunError& e) {
    throw gpulab::RunError(fmt::format("--state '{}': not migrating schema {} to {}: {}",
                                       dir.string(), from, kSchemaVersion, e.what()));
  }
  // Every step of every migration in one transaction: all of it, or none.
  try {
    transaction([&] {
      if (from == 1) migrate_nodes_from_v1();
      exec(kCreateTables);
      exec(fmt::format("PRAGMA user_version={}", kSchemaVersion).c_str());
    });
  } catch (const std::exception& e) {
    std::string why = e.what();
    std::replace(why.begin(), why.end(), '\n', ' ');
    throw gpulab::RunError(
        fmt::format("--state '{}': migrating schema {} to {} failed ({}); platform.db is "
                    "unchanged, a copy is in {}",
                    dir.string(), from, kSchemaVersion, why, backup.filename().string()));
  }
}

Store::~Store() {
  sqlite3_finalize(put_job_);
  sqlite3_finalize(put_task_);
  sqlite3_finalize(put_node_);
  sqlite3_close(db_);
}

void Store::migrate_nodes_from_v1() {
  std::vector<Node> nodes;
  for (const auto& d : load_docs(db_, "SELECT doc FROM nodes ORDER BY name")) nodes.push_back(node_from_v1_record(d));
  Stmt put(db_, "UPDATE nodes SET doc = ?2 WHERE name = ?1");
  for (const auto& n : nodes) {
    sqlite3_reset(put.get());
    bind_text(put.get(), 1, n.name);
    bind_text(put.get(), 2, node_record(n).dump());
    check(db_, sqlite3_step(put.get()), "migrate node");
  }
}

void Store::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string msg = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    throw gpulab::RunError(fmt::format("state database: {}", msg));
  }
}

void Store::transaction(const std::function<void()>& body) {
  exec("BEGIN IMMEDIATE");
  try {
    body();
  } catch (...) {
    exec("ROLLBACK");
    throw;
  }
  exec("COMMIT");
}

void Store::put_job(const Job& job) {
  sqlite3_reset(put_job_);
  bind_text(put_job_, 1, job.id);
  sqlite3_bind_int64(put_job_, 2, job.seq);
  bind_text(put_job_, 3, std::string(state_name(job.state)));
  if (job.idempotency_key.empty()) {
    sqlite3_bind_null(put_job_, 4);
  } else {
    bind_text(put_job_, 4, job.idempotency_key);
  }
  bind_text(put_job_, 5, job_record(job).dump());
  check(db_, sqlite3_step(put_job_), "put job");
}

void Store::put_task(const Task& task) {
  sqlite3_reset(put_task_);
  bind_text(put_task_, 1, task.id);
  bind_text(put_task_, 2, task.job);
  bind_text(put_task_, 3, task_record(task).dump());
  check(db_, sqlite3_step(put_task_), "put task");
}

void Store::put_node(const Node& node) {
  sqlite3_reset(put_node_);
  bind_text(put_node_, 1, node.name);
  bind_text(put_node_, 2, node_record(node).dump());
  check(db_, sqlite3_step(put_node_), "put node");
}

std::vector<Job> Store::load_jobs() {
  std::vector<Job> out;
  for (const auto& d : load_docs(db_, "SELECT doc FROM jobs ORDER BY seq")) out.push_back(job_from_record(d));
  return out;
}

std::vector<Task> Store::load_tasks() {
  std::vector<Task> out;
  for (const auto& d : load_docs(db_, "SELECT doc FROM tasks ORDER BY id")) out.push_back(task_from_record(d));
  return out;
}

std::vector<Node> Store::load_nodes() {
  std::vector<Node> out;
  for (const auto& d : load_docs(db_, "SELECT doc FROM nodes ORDER BY name")) out.push_back(node_from_record(d));
  return out;
}

std::int64_t Store::max_job_seq() {
  Stmt st(db_, "SELECT COALESCE(MAX(seq), 0) FROM jobs");
  check(db_, sqlite3_step(st.get()), "max seq");
  return sqlite3_column_int64(st.get(), 0);
}

Json job_record(const Job& job) {
  Json j = to_json(job);
  j["seq"] = job.seq;
  return j;
}

Job job_from_record(const Json& j) {
  try {
    Job job;
    job.id = j.at("id").get<std::string>();
    job.seq = j.at("seq").get<std::int64_t>();
    job.spec = parse_job_spec(j.at("spec"));
    job.state = parse_state(j.at("state").get<std::string>()).value();
    job.reason = j.at("reason").get<std::string>();
    for (const auto& s : j.at("placement")) {
      job.placement.push_back(Slot{s.at("rank").get<int>(), s.at("node").get<std::string>(),
                                   s.at("device").get<std::string>(), s.at("backend").get<std::string>()});
    }
    job.attempt = j.at("attempt").get<int>();
    job.restarts = j.at("restarts").get<int>();
    job.preemptions = j.value("preemptions", 0);  // absent in databases from before preemption
    job.requeued_because = j.value("requeued_because", std::string());
    job.idempotency_key = j.at("idempotency_key").get<std::string>();
    job.submitted_at = j.at("submitted_at").get<double>();
    job.started_at = j.at("started_at").get<double>();
    job.finished_at = j.at("finished_at").get<double>();
    job.result = j.at("result");
    job.topology = topology_from_json(j.value("topology", Json::object()));  // absent before topology-aware placement
    job.endpoint = j.value("endpoint", std::string());  // absent before serve jobs
    return job;
  } catch (const std::exception& e) {
    throw gpulab::RunError(fmt::format("state database: a job row is malformed: {}", e.what()));
  }
}

Json task_record(const Task& t) { return to_json(t); }

Task task_from_record(const Json& j) {
  try {
    Task t;
    t.id = j.at("id").get<std::string>();
    t.job = j.at("job").get<std::string>();
    t.attempt = j.at("attempt").get<int>();
    t.rank = j.at("rank").get<int>();
    t.world = j.at("world").get<int>();
    t.node = j.at("node").get<std::string>();
    t.device = j.at("device").get<std::string>();
    t.backend = j.at("backend").get<std::string>();
    t.state = parse_task_state(j.at("state").get<std::string>()).value();
    t.exit_code = j.at("exit_code").get<int>();
    t.message = j.at("message").get<std::string>();
    t.isolation = j.at("isolation").get<std::string>();
    t.device_nodes = j.value("device_nodes", std::vector<std::string>{});  // rows from before it existed
    t.endpoint = j.value("endpoint", std::string());
    return t;
  } catch (const std::exception& e) {
    throw gpulab::RunError(fmt::format("state database: a task row is malformed: {}", e.what()));
  }
}

Json node_record(const Node& n) {
  Json j = to_json(n, 0);
  j["last_heartbeat"] = n.last_heartbeat;
  return j;
}

namespace {

// Everything of a node row but its devices (the same in both schemas).
Node node_fields(const Json& j) {
  Node n;
  n.name = j.at("name").get<std::string>();
  n.address = j.at("address").get<std::string>();
  n.draining = j.at("draining").get<bool>();
  n.last_heartbeat = j.at("last_heartbeat").get<double>();
  n.protocol = j.at("protocol").get<int>();
  n.isolation = j.at("isolation").get<std::string>();
  const auto st = j.at("state").get<std::string>();
  n.state = st == "lost" ? NodeState::kLost : (n.draining ? NodeState::kDraining : NodeState::kReady);
  return n;
}

}  // namespace

Node node_from_v1_record(const Json& j) {
  try {
    Node n = node_fields(j);
    n.devices = devices_from_v1_json(j.at("devices"));
    return n;
  } catch (const std::exception& e) {
    throw gpulab::RunError(fmt::format("state database: a schema 1 node row is malformed: {}", e.what()));
  }
}

Node node_from_record(const Json& j) {
  try {
    Node n = node_fields(j);
    n.devices = devices_from_json(j.at("devices"), n.name);
    return n;
  } catch (const std::exception& e) {
    throw gpulab::RunError(fmt::format("state database: a node row is malformed: {}", e.what()));
  }
}

}  // namespace platform
