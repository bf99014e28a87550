#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "exporter/collector.hpp"
#include "exporter/fakegpu_source.hpp"
#include "exporter/nvml_source.hpp"
#include "exporter/simulated_source.hpp"
#include "exporter/textfile_source.hpp"
#include "gpulab/prom_text.hpp"

namespace fs = std::filesystem;
namespace prom = gpulab::prom;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("p10-exporter-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
  }
};

}  // namespace

TEST(Nvml, MissingLibraryIsUnavailableWithTheDlopenError) {
  exporter::NvmlSource nvml("libnvidia-ml-absent.so.1");
  prom::Exposition e;
  const auto a = nvml.collect(e);
  EXPECT_FALSE(a.up);
  EXPECT_NE(a.reason.find("libnvidia-ml-absent.so.1"), std::string::npos) << a.reason;
  EXPECT_TRUE(e.empty());
  // Asking again gives the same answer (it retries, it does not crash).
  EXPECT_FALSE(nvml.collect(e).up);
}

TEST(Nvml, ALibraryWithoutNvmlSymbolsIsUnavailable) {
  exporter::NvmlSource nvml("libm.so.6");
  prom::Exposition e;
  const auto a = nvml.collect(e);
  EXPECT_FALSE(a.up);
  EXPECT_EQ(a.reason.find("libm.so.6 loaded but lacks nvmlInit_v2, nvmlShutdown"), 0U) << a.reason;
  EXPECT_TRUE(e.empty());
}

TEST(Fakegpu, MissingStatsFileIsUnavailable) {
  exporter::FakegpuSource src("/nonexistent/fakegpu/stats");
  prom::Exposition e;
  const auto a = src.collect(e);
  EXPECT_FALSE(a.up);
  EXPECT_EQ(a.reason, "/nonexistent/fakegpu/stats: No such file or directory");
}

TEST(Fakegpu, StatsBecomeGaugesAndCounters) {
  TempDir d;
  d.write("stats", "contexts 2\nbuffers 3\nbytes_in_use 4096\nsubmits 10\ncompleted 9\n");
  exporter::FakegpuSource src(d.path / "stats");
  prom::Exposition e;
  ASSERT_TRUE(src.collect(e).up);
  EXPECT_EQ(
      e.render(),
      "# HELP fakegpu_buffers Live buffers on the fakegpu device.\n"
      "# TYPE fakegpu_buffers gauge\nfakegpu_buffers 3\n"
      "# HELP fakegpu_completed_total fakegpu stats 'completed' since the device was created.\n"
      "# TYPE fakegpu_completed_total counter\nfakegpu_completed_total 9\n"
      "# HELP fakegpu_contexts Open contexts (file descriptors) on the fakegpu device.\n"
      "# TYPE fakegpu_contexts gauge\nfakegpu_contexts 2\n"
      "# HELP fakegpu_memory_used_bytes Device memory allocated on the fakegpu device.\n"
      "# TYPE fakegpu_memory_used_bytes gauge\nfakegpu_memory_used_bytes 4096\n"
      "# HELP fakegpu_submits_total fakegpu stats 'submits' since the device was created.\n"
      "# TYPE fakegpu_submits_total counter\nfakegpu_submits_total 10\n");
  d.write("stats", "contexts two\n");
  prom::Exposition bad;
  const auto a = src.collect(bad);
  EXPECT_FALSE(a.up);
  EXPECT_NE(a.reason.find("stats:1: expected 'name value', got 'contexts two'"), std::string::npos);
  EXPECT_TRUE(bad.empty());
}

TEST(Textfile, MissingDirectoryIsUnavailable) {
  exporter::TextfileSource src("/nonexistent/textfiles");
  prom::Exposition e;
  EXPECT_FALSE(src.collect(e).up);
}

TEST(Textfile, FilesOverTheCapAreSkippedThroughTheSharedReader) {
  TempDir d;
  d.write("big.prom", std::string(exporter::TextfileSource::kMaxFileBytes + 1, '#'));
  exporter::TextfileSource src(d.path);
  prom::Exposition e;
  const auto a = src.collect(e);
  ASSERT_EQ(a.warnings.size(), 1U);
  EXPECT_EQ(a.warnings[0], "skipping big.prom: '" + (d.path / "big.prom").string() + "' is larger than 4 MiB");
}

TEST(Textfile, ReexposesGoodFilesAndSkipsBadOnesWithAReason) {
  TempDir d;
  prom::Exposition lab;
  lab.gauge("allocator_reserved_bytes", "Reserved.").set({}, 1024);
  lab.histogram("serving_ttft_seconds", "TTFT.", {0.1, 0.3}).observe({}, 0.2);
  prom::write_file_atomic(d.path / "a-lab.prom", lab.render());
  d.write("b-broken.prom", "kv_cache_blocks{state=\"used\" 3\n");
  d.write("c-clash.prom", "# TYPE allocator_reserved_bytes counter\nallocator_reserved_bytes 1\n");
  d.write("d-dup.prom", "# TYPE allocator_reserved_bytes gauge\nallocator_reserved_bytes 7\n");
  d.write(".e-temp.prom.AbC123", "half a fi");  // a write_file_atomic temp file
  d.write("notes.txt", "not a metrics file");
  exporter::TextfileSource src(d.path);
  prom::Exposition e;
  const auto a = src.collect(e);
  ASSERT_TRUE(a.up);
  ASSERT_EQ(a.warnings.size(), 3U);
  EXPECT_EQ(a.warnings[0], "skipping b-broken.prom: line 1: expected ',' or '}' after a label");
  EXPECT_EQ(a.warnings[1],
            "skipping c-clash.prom: allocator_reserved_bytes is a gauge in an earlier file, a "
            "counter here");
  EXPECT_EQ(a.warnings[2],
            "skipping d-dup.prom: allocator_reserved_bytes repeats a series an earlier file has");
  ASSERT_NE(e.find("allocator_reserved_bytes"), nullptr);
  EXPECT_EQ(e.find("allocator_reserved_bytes")->find({})->value, 1024);
  ASSERT_NE(e.find("serving_ttft_seconds"), nullptr);
  EXPECT_EQ(e.find("gpu_exporter_textfile_scrape_error")->find({})->value, 1);
  EXPECT_EQ(e.find("kv_cache_blocks"), nullptr);
}

TEST(GpuMetrics, DcgmCompatAddsDcgmNamesUnitsAndLabels) {
  exporter::SimulatedGpus gpus(1, 1, exporter::parse_injections("xid:79@0s"));
  prom::Exposition e;
  exporter::add_gpu_metrics(gpus.sample(), true, e);
  const auto* fb = e.find("DCGM_FI_DEV_FB_USED");
  ASSERT_NE(fb, nullptr);
  const auto s = gpus.sample()[0];
  const prom::Labels dcgm{
      {"gpu", "0"}, {"UUID", s.device.id}, {"device", "nvidia0"}, {"modelName", s.device.model}};
  ASSERT_NE(fb->find(dcgm), nullptr);
  EXPECT_EQ(fb->find(dcgm)->value, *s.memory_used_bytes / (1 << 20));
  EXPECT_EQ(e.find("DCGM_FI_DEV_XID_ERRORS")->find(dcgm)->value, 79);
  EXPECT_EQ(e.find("DCGM_FI_DEV_SM_CLOCK")->type(), prom::MetricType::kGauge);
  EXPECT_EQ(e.find("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION")->type(), prom::MetricType::kCounter);
  // Without the flag, no DCGM names.
  prom::Exposition plain;
  exporter::add_gpu_metrics(gpus.sample(), false, plain);
  for (const auto& name : plain.names()) EXPECT_EQ(name.rfind("gpu_", 0), 0U) << name;
}

#ifdef GPULAB_FAKE_NVML
// The success path through a stand-in libnvidia-ml (tests/p10-exporter/fake_nvml.c):
// every field in the exporter's units, a field NVML does not support left out,
// and an Xid event from the event-set thread. (One test: the stand-in delivers
// its Xid once per process.)
TEST(Nvml, ReadsEveryFieldInBaseUnitsAndCountsXidEvents) {
  exporter::NvmlSource nvml(GPULAB_FAKE_NVML);
  prom::Exposition e;
  ASSERT_TRUE(nvml.collect(e).up);
  // The Xid arrives on the watcher thread; collect until it shows.
  for (int i = 0; i < 200 && e.find("gpu_xid_errors_total") == nullptr; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    e = prom::Exposition();
    ASSERT_TRUE(nvml.collect(e).up);
  }
  const prom::Labels g0{
      {"gpu", "0"}, {"uuid", "GPU-fake-0000"}, {"model_name", "Fake A100-SXM4-40GB"}};
  const prom::Labels g1{
      {"gpu", "1"}, {"uuid", "GPU-fake-0001"}, {"model_name", "Fake A100-SXM4-40GB"}};
  const auto value = [&](const char* family, prom::Labels labels) {
    const prom::Family* f = e.find(family);
    if (f == nullptr) return -1.0;
    const auto* s = f->find(labels);
    return s == nullptr ? -1.0 : s->value;
  };
  const auto with = [](prom::Labels l, const char* k, const char* v) {
    l.emplace_back(k, v);
    return l;
  };
  EXPECT_EQ(value("gpu_utilization_ratio", g0), 0.37);
  EXPECT_EQ(value("gpu_memory_used_bytes", g0), 1073741824);
  EXPECT_EQ(value("gpu_memory_free_bytes", g0), 39.0 * 1073741824);
  EXPECT_EQ(value("gpu_temperature_celsius", g1), 41);
  EXPECT_EQ(value("gpu_power_watts", g0), 123.456);
  EXPECT_EQ(value("gpu_energy_joules_total", g0), 5000);
  EXPECT_EQ(value("gpu_sm_clock_hertz", g0), 1410e6);
  EXPECT_EQ(value("gpu_pcie_tx_bytes_per_second", g0), 1024000);
  EXPECT_EQ(value("gpu_pcie_rx_bytes_per_second", g1), 2048000);
  EXPECT_EQ(value("gpu_ecc_errors_total", with(g0, "type", "single_bit")), 5);
  EXPECT_EQ(value("gpu_ecc_errors_total", with(g0, "type", "double_bit")), 1);
  EXPECT_EQ(value("gpu_ecc_errors_total", with(g1, "type", "single_bit")),
            -1);  // not supported: absent
  EXPECT_EQ(value("gpu_throttled", with(g0, "reason", "thermal")), 1);
  EXPECT_EQ(value("gpu_throttled", with(g0, "reason", "power")), 0);
  EXPECT_EQ(value("gpu_xid_errors_total", with(g1, "xid", "79")), 1);
  EXPECT_EQ(e.find("gpu_xid_errors_total")->series_count(), 1U);
}
#endif
