// A real Prometheus (Debian's `prometheus`) in the loop: it scrapes
// gpu-exporter (simulated GPUs, an Xid 79 injected 1 s of real time after the
// start), stores the series, and evaluates an alert rule on them. The test
// asks Prometheus's HTTP API for the series and its labels and waits for the
// alert to fire. Skips if prometheus is not installed.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "exporter_process.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// GET path on 127.0.0.1:port, parsed as JSON; null on any failure.
json api(int port, const std::string& path) {
  const auto r = p10test::http_get(port, path);
  if (r.status != 200) return nullptr;
  // Prometheus answers HTTP/1.1 with chunked encoding for large bodies; these are small.
  return json::parse(r.body, nullptr, false);
}

// Polls until pred(result) or ~60 s; returns the last result.
template <class Pred>
json wait_for(int port, const std::string& path, Pred pred) {
  json last;
  for (int i = 0; i < 240; ++i) {
    last = api(port, path);
    if (!last.is_discarded() && !last.is_null() && pred(last)) return last;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return last;
}

}  // namespace

TEST(Prometheus, ScrapesTheExporterStoresTheXidSeriesAndFiresTheAlert) {
  const std::string prometheus = p10test::find_program("prometheus");
  if (prometheus.empty()) GTEST_SKIP() << "prometheus not installed (Debian package prometheus)";

  // The Xid happens at simulated 30 s = 1 s of real time at --time-scale 30.
  p10test::Exporter exp(
      {"--simulate", "2", "--inject", "xid:79:1@30s", "--time-scale", "30", "--interval", "200ms"});
  ASSERT_NE(exp.port(), 0) << exp.log();

  const fs::path dir = fs::temp_directory_path() / ("p10-prometheus-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "prometheus.yml") << "global:\n"
                                           "  scrape_interval: 1s\n"
                                           "  scrape_timeout: 900ms\n"
                                           "  evaluation_interval: 1s\n"
                                           "rule_files: ['rules.yml']\n"
                                           "scrape_configs:\n"
                                           "  - job_name: gpu\n"
                                           "    static_configs:\n"
                                           "      - targets: ['127.0.0.1:"
                                        << exp.port() << "']\n";
  std::ofstream(dir / "rules.yml")
      << "groups:\n"
         "  - name: gpu-exporter-integration\n"
         "    rules:\n"
         "      - alert: GpuXidError\n"
         "        expr: gpu_xid_errors_total > 0\n"
         "        labels: {severity: critical}\n"
         "        annotations:\n"
         "          summary: 'GPU {{ $labels.gpu }} reported Xid {{ $labels.xid }}'\n";
  const int port = gpulab_test::free_loopback_port();
  ASSERT_NE(port, 0);
  p10test::Process prom(
      prometheus, {"--config.file=" + (dir / "prometheus.yml").string(),
                   "--storage.tsdb.path=" + (dir / "data").string(),
                   "--web.listen-address=127.0.0.1:" + std::to_string(port), "--log.level=warn"});

  // The scrape target is up.
  const json up = wait_for(port, "/api/v1/query?query=up%7Bjob%3D%22gpu%22%7D", [](const json& j) {
    return j["status"] == "success" && !j["data"]["result"].empty() &&
           j["data"]["result"][0]["value"][1] == "1";
  });
  ASSERT_TRUE(!up.is_null() && !up.is_discarded() && !up["data"]["result"].empty())
      << "Prometheus never scraped the exporter.\nprometheus log:\n"
      << prom.log() << "\nexporter log:\n"
      << exp.log();

  // The Xid series arrived, with the exporter's labels and the scrape's.
  const json xid = wait_for(port, "/api/v1/query?query=gpu_xid_errors_total", [](const json& j) {
    return j["status"] == "success" && !j["data"]["result"].empty();
  });
  ASSERT_FALSE(xid.is_null() || xid.is_discarded() || xid["data"]["result"].empty()) << prom.log();
  ASSERT_EQ(xid["data"]["result"].size(), 1U) << xid.dump();
  const json& metric = xid["data"]["result"][0]["metric"];
  EXPECT_EQ(metric["__name__"], "gpu_xid_errors_total");
  EXPECT_EQ(metric["gpu"], "1");
  EXPECT_EQ(metric["xid"], "79");
  EXPECT_EQ(metric["model_name"], "Simulated H100 80GB HBM3");
  EXPECT_EQ(metric["uuid"].get<std::string>().rfind("GPU-", 0), 0U);
  EXPECT_EQ(metric["job"], "gpu");
  EXPECT_EQ(metric["instance"], "127.0.0.1:" + std::to_string(exp.port()));
  EXPECT_EQ(xid["data"]["result"][0]["value"][1], "1");

  // Per-GPU gauges are there for both GPUs; the lost GPU reads 0 utilisation.
  const json util = api(port, "/api/v1/query?query=gpu_utilization_ratio");
  ASSERT_EQ(util["data"]["result"].size(), 2U) << util.dump();

  // The alert fires, labelled with the GPU and the Xid.
  const json alerts = wait_for(port, "/api/v1/alerts", [](const json& j) {
    for (const auto& a : j["data"]["alerts"]) {
      if (a["labels"]["alertname"] == "GpuXidError" && a["state"] == "firing") return true;
    }
    return false;
  });
  bool fired = false;
  for (const auto& a : alerts["data"]["alerts"]) {
    if (a["labels"]["alertname"] == "GpuXidError" && a["state"] == "firing") {
      fired = true;
      EXPECT_EQ(a["labels"]["gpu"], "1");
      EXPECT_EQ(a["labels"]["xid"], "79");
      EXPECT_EQ(a["annotations"]["summary"], "GPU 1 reported Xid 79");
    }
  }
  EXPECT_TRUE(fired) << alerts.dump() << "\n" << prom.log();

  EXPECT_TRUE(exp.alive());
  prom.stop();
  fs::remove_all(dir);
}
