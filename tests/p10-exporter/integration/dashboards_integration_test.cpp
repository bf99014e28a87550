// The Grafana dashboards of the SLO pack (labs/p10-exporter/slo/dashboards/*.json) against a
// real Prometheus: the labs write their metrics (caching-alloc, batching-sim, paged-kv,
// ring-allreduce), gpu-exporter re-exposes them beside its simulated GPUs (--textfile-dir),
// Prometheus scrapes it, and every query of every panel must succeed AND return data — so a
// panel that names a metric or label no program writes fails here, not on a wall display.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "exporter_process.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const fs::path kRepo = fs::path(GPULAB_LAB_DIR).parent_path().parent_path();
const fs::path kDashboards = fs::path(GPULAB_LAB_DIR) / "slo" / "dashboards";

std::string url_encode(const std::string& s) {
  std::string out;
  for (const unsigned char c : s) {
    if (std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

json query(int port, const std::string& expr) {
  const auto r = p10test::http_get(port, "/api/v1/query?query=" + url_encode(expr));
  json j = json::parse(r.body, nullptr, false);
  return j.is_discarded() ? json{{"status", "unparseable"}, {"body", r.body}} : j;
}

std::vector<json> load_dashboards() {
  std::vector<json> out;
  for (const auto& e : fs::directory_iterator(kDashboards)) {
    if (e.path().extension() != ".json") continue;
    std::ifstream in(e.path());
    json d = json::parse(in, nullptr, false);
    d["__file"] = e.path().filename().string();
    out.push_back(std::move(d));
  }
  return out;
}

bool built(const std::string& program) { return fs::exists(fs::path(GPULAB_BIN_DIR) / program); }

// Runs one lab program writing its metrics into dir/<file>; false (and why) if it failed.
::testing::AssertionResult write_metrics(const std::string& cmd) {
  const auto r = p10test::shell(cmd);
  if (r.rc != 0) return ::testing::AssertionFailure() << cmd << " exited " << r.rc << ": " << r.out;
  return ::testing::AssertionSuccess();
}

}  // namespace

TEST(Dashboards, AreWellFormedWithUniqueIdsAndAQueryInEveryPanel) {
  const auto dashboards = load_dashboards();
  ASSERT_GE(dashboards.size(), 4u) << kDashboards;
  std::set<std::string> uids;
  for (const json& d : dashboards) {
    const std::string file = d["__file"];
    ASSERT_FALSE(d.is_discarded()) << file << " is not JSON";
    ASSERT_TRUE(d.contains("uid") && d.contains("title") && d.contains("panels")) << file;
    EXPECT_TRUE(uids.insert(d["uid"].get<std::string>()).second) << "duplicate uid in " << file;
    std::set<int> ids;
    for (const json& p : d["panels"]) {
      EXPECT_TRUE(ids.insert(p.value("id", -1)).second) << file << ": duplicate panel id";
      EXPECT_FALSE(p.value("title", "").empty()) << file;
      EXPECT_FALSE(p.value("description", "").empty()) << file << ": " << p.value("title", "");
      ASSERT_FALSE(p["targets"].empty()) << file << ": " << p.value("title", "");
      for (const json& t : p["targets"]) EXPECT_FALSE(t.value("expr", "").empty()) << file;
    }
  }
}

TEST(Dashboards, EveryPanelQueryReturnsDataFromTheLabsThroughARealPrometheus) {
  const std::string prometheus = p10test::find_program("prometheus");
  if (prometheus.empty()) GTEST_SKIP() << "prometheus not installed (Debian package prometheus)";
  for (const char* program : {"caching-alloc", "batching-sim", "paged-kv", "ring-allreduce"})
    if (!built(program)) GTEST_SKIP() << program << " is not built (its lab is not in GPULAB_LABS)";

  const fs::path dir = fs::temp_directory_path() / ("p10-dashboards-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "textfiles");
  const std::string bin = GPULAB_BIN_DIR, tf = (dir / "textfiles").string();
  ASSERT_TRUE(write_metrics("cd '" + (kRepo / "labs/p05-caching-allocator").string() + "' && '" + bin +
                            "/caching-alloc' replay traces/fragmentation-oom.csv --capacity-mib 100 "
                            "--metrics-out '" + tf + "/allocator.prom' >/dev/null"));
  ASSERT_TRUE(write_metrics("'" + bin + "/batching-sim' prefix-cache --metrics-out '" + tf +
                            "/serving.prom' >/dev/null"));
  ASSERT_TRUE(write_metrics("'" + bin + "/paged-kv' --metrics-out '" + tf + "/kv.prom' >/dev/null"));
  ASSERT_TRUE(write_metrics("'" + bin + "/ring-allreduce' --world 2 --metrics-out '" + tf +
                            "/collectives.prom' >/dev/null"));

  // Two simulated GPUs, an Xid 79 on GPU 1 early on, the lab files re-exposed.
  p10test::Exporter exp({"--simulate", "2", "--inject", "xid:79:1@30s", "--time-scale", "30",
                         "--interval", "200ms", "--textfile-dir", tf});
  ASSERT_NE(exp.port(), 0) << exp.log();
  std::ofstream(dir / "prometheus.yml") << "global:\n"
                                           "  scrape_interval: 1s\n"
                                           "  scrape_timeout: 900ms\n"
                                           "scrape_configs:\n"
                                           "  - job_name: gpu\n"
                                           "    static_configs:\n"
                                           "      - targets: ['127.0.0.1:"
                                        << exp.port() << "']\n";
  const int port = gpulab_test::free_loopback_port();
  ASSERT_NE(port, 0);
  p10test::Process prom(
      prometheus, {"--config.file=" + (dir / "prometheus.yml").string(),
                   "--storage.tsdb.path=" + (dir / "data").string(),
                   "--web.listen-address=127.0.0.1:" + std::to_string(port), "--log.level=warn"});

  // rate() and increase() need two samples in their window, and the Xid must have happened:
  // wait (up to ~60 s) until both are true rather than sleeping a guessed time.
  bool ready = false;
  for (int i = 0; i < 240 && !ready; ++i) {
    const json samples = query(port, "count_over_time(allocator_reserved_bytes[5m])");
    const json xid = query(port, "gpu_xid_errors_total");
    ready = samples.value("status", "") == "success" && !samples["data"]["result"].empty() &&
            std::stod(samples["data"]["result"][0]["value"][1].get<std::string>()) >= 3 &&
            !xid["data"]["result"].empty();
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  ASSERT_TRUE(ready) << "Prometheus never had three scrapes of the lab metrics and the Xid.\n"
                     << "prometheus log:\n" << prom.log() << "\nexporter log:\n" << exp.log();

  std::size_t checked = 0;
  for (const json& d : load_dashboards()) {
    for (const json& p : d["panels"]) {
      for (const json& t : p["targets"]) {
        const std::string expr = t["expr"];
        const json r = query(port, expr);
        const std::string where = d["__file"].get<std::string>() + " / " + p["title"].get<std::string>();
        ASSERT_EQ(r.value("status", ""), "success") << where << ": " << expr << "\n" << r.dump();
        EXPECT_FALSE(r["data"]["result"].empty())
            << where << ": no data — does a program write every metric and label it names?\n" << expr;
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 20u);
  prom.stop();
  fs::remove_all(dir);
}
