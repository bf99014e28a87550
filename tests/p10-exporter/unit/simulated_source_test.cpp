#include "exporter/simulated_source.hpp"

#include <gtest/gtest.h>

#include "gpulab/errors.hpp"

using exporter::Injection;
using exporter::SimulatedGpus;

namespace {

std::string render_at(unsigned n, std::uint64_t seed, const std::string& inject, double t) {
  exporter::SimulatedSource src(
      SimulatedGpus(n, seed, exporter::parse_injections(inject)), [t] { return t; }, false);
  gpulab::prom::Exposition e;
  EXPECT_TRUE(src.collect(e).up);
  return e.render();
}

double value(const SimulatedGpus& g, unsigned gpu, std::optional<double> exporter::GpuSample::*f) {
  return *(g.sample().at(gpu).*f);
}

}  // namespace

TEST(Inject, ParsesEveryKindAndUnit) {
  const auto v = exporter::parse_injections(
      "xid:79@30s, xid:48:3@1.5m,thermal:0@60s,leak:2@500ms,power:1@1h,ecc:0@0s");
  ASSERT_EQ(v.size(), 6U);
  EXPECT_EQ(v[0].kind, Injection::Kind::kXid);
  EXPECT_EQ(v[0].xid, 79U);
  EXPECT_EQ(v[0].gpu, 0U);
  EXPECT_DOUBLE_EQ(v[0].at_seconds, 30);
  EXPECT_EQ(v[1].xid, 48U);
  EXPECT_EQ(v[1].gpu, 3U);
  EXPECT_DOUBLE_EQ(v[1].at_seconds, 90);
  EXPECT_EQ(v[2].kind, Injection::Kind::kThermal);
  EXPECT_EQ(v[3].kind, Injection::Kind::kLeak);
  EXPECT_DOUBLE_EQ(v[3].at_seconds, 0.5);
  EXPECT_EQ(v[4].kind, Injection::Kind::kPower);
  EXPECT_DOUBLE_EQ(v[4].at_seconds, 3600);
  EXPECT_EQ(v[5].kind, Injection::Kind::kEcc);
  EXPECT_TRUE(exporter::parse_injections("").empty());
}

TEST(Inject, RejectsBadItemsNamingThem) {
  const auto msg = [](const std::string& spec) {
    try {
      exporter::parse_injections(spec);
    } catch (const gpulab::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(
      msg("xid:79"),
      "--inject 'xid:79': expected KIND:ARG@TIME, e.g. xid:79@30s, thermal:0@60s, leak:2@10s");
  EXPECT_EQ(msg("melt:0@1s"),
            "--inject 'melt:0@1s': unknown kind 'melt' (xid, thermal, power, leak, ecc)");
  EXPECT_EQ(msg("xid:x@1s"), "--inject 'xid:x@1s': the Xid code 'x' is not a whole number");
  EXPECT_EQ(msg("xid:0@1s"), "--inject 'xid:0@1s': Xid codes are 1..1000");
  EXPECT_EQ(msg("leak:1@10"), "--inject 'leak:1@10': '10': the unit must be ms, s, m or h");
  EXPECT_EQ(msg("leak:1@s"), "--inject 'leak:1@s': 's' is not a duration (e.g. 30s, 1.5m, 500ms)");
  EXPECT_EQ(msg("xid:79@1s,,leak:0@1s"), "--inject: empty item (syntax: KIND:ARG@TIME[,...])");
  EXPECT_THROW(SimulatedGpus(2, 1, exporter::parse_injections("leak:2@1s")), gpulab::UsageError);
  EXPECT_THROW(SimulatedGpus(0, 1, {}), gpulab::UsageError);
  EXPECT_THROW(SimulatedGpus(SimulatedGpus::kMaxGpus + 1, 1, {}), gpulab::UsageError);
}

TEST(Simulated, SameSeedSameExpositionOtherSeedOther) {
  const std::string a = render_at(4, 7, "xid:79@30s,thermal:1@10s", 45);
  EXPECT_EQ(a, render_at(4, 7, "xid:79@30s,thermal:1@10s", 45));
  EXPECT_NE(a, render_at(4, 8, "xid:79@30s,thermal:1@10s", 45));
  // Fractions of a second do not change the state: time runs in whole ticks.
  EXPECT_EQ(render_at(2, 1, "", 12.0), render_at(2, 1, "", 12.9));
}

TEST(Simulated, AGpusFaultsDoNotShiftAnotherGpusNumbers) {
  SimulatedGpus quiet(2, 5, {});
  SimulatedGpus faulty(2, 5, exporter::parse_injections("thermal:0@3s,leak:0@2s,xid:79@4s"));
  quiet.advance_to(20);
  faulty.advance_to(20);
  EXPECT_EQ(value(quiet, 1, &exporter::GpuSample::utilization_ratio),
            value(faulty, 1, &exporter::GpuSample::utilization_ratio));
  EXPECT_EQ(value(quiet, 1, &exporter::GpuSample::energy_joules),
            value(faulty, 1, &exporter::GpuSample::energy_joules));
}

TEST(Simulated, XidAppearsAtItsTimeAndXid79StopsTheGpu) {
  SimulatedGpus g(2, 1, exporter::parse_injections("xid:79:1@30s,xid:48@5s"));
  g.advance_to(29.9);
  EXPECT_TRUE(g.sample()[1].xid_counts.empty());
  EXPECT_GT(value(g, 1, &exporter::GpuSample::utilization_ratio), 0.5);
  g.advance_to(30);
  EXPECT_EQ(g.sample()[1].xid_counts.at(79), 1);
  EXPECT_EQ(g.sample()[1].last_xid, 79U);
  EXPECT_EQ(value(g, 1, &exporter::GpuSample::utilization_ratio), 0);
  EXPECT_EQ(value(g, 1, &exporter::GpuSample::sm_clock_hertz), 0);
  g.advance_to(100);
  EXPECT_EQ(g.sample()[1].xid_counts.at(79), 1);  // one event, counted once
  EXPECT_EQ(g.sample()[0].xid_counts.at(48), 1);
  EXPECT_EQ(value(g, 0, &exporter::GpuSample::ecc_double_bit), 1);  // Xid 48 is a DBE
  EXPECT_GT(value(g, 0, &exporter::GpuSample::utilization_ratio), 0.5);
}

TEST(Simulated, ThermalThrottleLowersClocksAndLeakGrowsMemory) {
  SimulatedGpus g(3, 1, exporter::parse_injections("thermal:0@60s,leak:2@10s"));
  g.advance_to(9);
  const double used_before = value(g, 2, &exporter::GpuSample::memory_used_bytes);
  g.advance_to(11);  // ticks 10 and 11 leak
  EXPECT_EQ(value(g, 2, &exporter::GpuSample::memory_used_bytes),
            used_before + 2 * 512.0 * 1024 * 1024);
  g.advance_to(59);
  EXPECT_FALSE(*g.sample()[0].throttled_thermal);
  g.advance_to(60);
  EXPECT_TRUE(*g.sample()[0].throttled_thermal);
  EXPECT_GE(value(g, 0, &exporter::GpuSample::temperature_celsius), 92);
  EXPECT_EQ(value(g, 0, &exporter::GpuSample::sm_clock_hertz), 1200e6);
  g.advance_to(10000);  // the leak fills the card but never past it
  EXPECT_GT(value(g, 2, &exporter::GpuSample::memory_free_bytes), 0);
  EXPECT_EQ(value(g, 2, &exporter::GpuSample::memory_used_bytes) +
                value(g, 2, &exporter::GpuSample::memory_free_bytes),
            SimulatedGpus::kMemoryTotalBytes);
}

TEST(Simulated, CountersNeverGoDownAndTimeNeverGoesBack) {
  SimulatedGpus g(1, 3, {});
  double last = -1;
  for (int t = 0; t < 50; ++t) {
    g.advance_to(t);
    const double e = value(g, 0, &exporter::GpuSample::energy_joules);
    EXPECT_GT(e, last);
    last = e;
  }
  g.advance_to(10);
  EXPECT_EQ(g.tick(), 49);
}
