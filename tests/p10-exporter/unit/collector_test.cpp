#include "exporter/collector.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>

#include "exporter/nvml_source.hpp"
#include "exporter/simulated_source.hpp"

namespace prom = gpulab::prom;

namespace {

class FakeSource : public exporter::Source {
 public:
  explicit FakeSource(std::string name) : name_(std::move(name)) {}
  std::string_view name() const override { return name_; }
  exporter::Availability collect(prom::Exposition& out) override {
    ++calls;
    if (throws) throw std::runtime_error("boom");
    if (!up) return exporter::unavailable("device gone");
    (counter ? out.counter(family, "A fake family.") : out.gauge(family, "A fake family."))
        .set({{"n", std::to_string(calls)}}, calls);
    return exporter::available();
  }
  std::string name_;
  std::string family = "fake_value";
  bool up = true;
  bool throws = false;
  bool counter = false;
  int calls = 0;
};

}  // namespace

TEST(Collector, ReportsEachSourceUpOrDownAndLogsOnlyChanges) {
  auto a = std::make_unique<FakeSource>("alpha");
  auto* alpha = a.get();
  std::vector<std::unique_ptr<exporter::Source>> sources;
  sources.push_back(std::move(a));
  sources.push_back(std::make_unique<exporter::NvmlSource>("libnvidia-ml-absent.so.1"));
  std::vector<std::string> log;
  exporter::Collector c(std::move(sources), [&](const std::string& l) { log.push_back(l); });
  const std::string text = c.collect();
  EXPECT_NE(text.find("gpu_exporter_source_up{source=\"alpha\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("gpu_exporter_source_up{source=\"nvml\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("fake_value{n=\"1\"} 1\n"), std::string::npos);
  ASSERT_EQ(log.size(), 1U);
  EXPECT_EQ(log[0].rfind("source nvml unavailable: libnvidia-ml-absent.so.1", 0), 0U) << log[0];
  c.collect();
  EXPECT_EQ(log.size(), 1U);  // same state, no new line
  alpha->up = false;
  const std::string down = c.collect();
  EXPECT_NE(down.find("gpu_exporter_source_up{source=\"alpha\"} 0\n"), std::string::npos);
  EXPECT_EQ(down.find("fake_value"), std::string::npos);
  ASSERT_EQ(log.size(), 2U);
  EXPECT_EQ(log[1], "source alpha unavailable: device gone");
  alpha->up = true;
  c.collect();
  ASSERT_EQ(log.size(), 3U);
  EXPECT_EQ(log[2], "source alpha up");
  const std::string latest = c.collect();
  EXPECT_EQ(*c.snapshot(), latest);
}

TEST(Collector, AThrowingOrClashingSourceIsDownAndTheOthersStillServe) {
  auto a = std::make_unique<FakeSource>("alpha");
  auto b = std::make_unique<FakeSource>("beta");
  auto* beta = b.get();
  beta->throws = true;
  auto d = std::make_unique<FakeSource>("delta");
  d->family = "fake_other";
  auto e = std::make_unique<FakeSource>("epsilon");
  e->counter = true;  // "fake_value" is alpha's gauge: a clash
  std::vector<std::unique_ptr<exporter::Source>> sources;
  sources.push_back(std::move(a));
  sources.push_back(std::move(b));
  sources.push_back(std::move(d));
  sources.push_back(std::move(e));
  exporter::Collector c(std::move(sources), [](const std::string&) {});
  const std::string text = c.collect();
  EXPECT_EQ(c.source_up().at("epsilon"), false);
  EXPECT_NE(text.find("gpu_exporter_source_up{source=\"epsilon\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE fake_value gauge\nfake_value{n=\"1\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("fake_other{n=\"1\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("gpu_exporter_source_up{source=\"beta\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("gpu_exporter_source_up{source=\"alpha\"} 1\n"), std::string::npos);
  EXPECT_EQ(c.source_up().at("beta"), false);
  EXPECT_EQ(c.source_up().at("delta"), true);
}

TEST(Collector, BackgroundCollectionPublishesNewSnapshots) {
  std::vector<std::unique_ptr<exporter::Source>> sources;
  sources.push_back(std::make_unique<FakeSource>("alpha"));
  exporter::Collector c(std::move(sources), [](const std::string&) {});
  c.start(std::chrono::milliseconds(10));
  EXPECT_GE(c.collections(), 1U);  // start() collects before it returns
  const auto first = c.snapshot();
  for (int i = 0; i < 500 && c.collections() < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  c.stop();
  EXPECT_GE(c.collections(), 3U);
  EXPECT_NE(*first, *c.snapshot());
  const auto n = c.collections();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(c.collections(), n);  // stopped means stopped
}
