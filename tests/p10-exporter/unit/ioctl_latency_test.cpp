// gpulab-ioctl-latency's report side, without root or BPF: request codes as the _IOC macros
// spell them, quantiles as bucket bounds, the Prometheus histogram the exporter re-exposes, and
// --device paths resolved (or refused) as the BPF program will compare them.
#include "exporter/ioctl_latency.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>

#include "exporter/ioctl_target.hpp"
#include "exporter/textfile_source.hpp"
#include "gpulab/errors.hpp"

namespace {

using exporter::IoctlReport;
using exporter::IoctlSeries;

IoctlSeries series(std::size_t target, std::uint32_t request,
                   std::initializer_list<std::pair<std::size_t, std::uint64_t>> slots) {
  IoctlSeries s;
  s.target = target;
  s.request = request;
  for (const auto& [k, n] : slots) {
    s.slots[k] += n;
    s.count += n;
    s.sum_ns += n * (std::uint64_t{3} << k >> 1);  // 1.5 * 2^k: inside slot k
  }
  return s;
}

IoctlReport report_of(std::vector<IoctlSeries> s) {
  IoctlReport r;
  r.targets = {{"/dev/nvidia0", 0, 0, true}, {"/tmp/mnt/fakegpu", 0, 0, false}};
  r.series = std::move(s);
  r.seconds = 2;
  exporter::sort_series(r);
  return r;
}

TEST(IoctlRequest, IsSpelledAsTheIocMacros) {
  EXPECT_EQ(exporter::describe_ioctl_request(0x80604600), "_IOR('F', 0, 96)");   // fakegpu INFO
  EXPECT_EQ(exporter::describe_ioctl_request(0xc0104601), "_IOWR('F', 1, 16)");  // ALLOC
  EXPECT_EQ(exporter::describe_ioctl_request(0x40084602), "_IOW('F', 2, 8)");    // FREE
  EXPECT_EQ(exporter::describe_ioctl_request(0x5401), "_IO('T', 1)");            // TCGETS
  EXPECT_EQ(exporter::describe_ioctl_request(0x0005), "_IO(0x00, 5)");
  EXPECT_EQ(exporter::describe_ioctl_request(0x40002700), "_IOW(0x27, 0, 0)");  // a quote: hex
}

TEST(IoctlQuantile, IsTheUpperBoundOfTheBucketHoldingThatRank) {
  // 90 calls in [4, 8) us (slot 12), 9 in [1, 2) ms (slot 20), 1 in [0.5, 1) s (slot 29).
  const auto s = series(0, 1, {{12, 90}, {20, 9}, {29, 1}});
  EXPECT_EQ(exporter::ioctl_quantile_upper_ns(s, 0.50), 8192u);
  EXPECT_EQ(exporter::ioctl_quantile_upper_ns(s, 0.90), 8192u);     // rank 90: the last fast one
  EXPECT_EQ(exporter::ioctl_quantile_upper_ns(s, 0.91), 2097152u);  // rank 91: the first slow one
  EXPECT_EQ(exporter::ioctl_quantile_upper_ns(s, 0.99), 2097152u);
  EXPECT_EQ(exporter::ioctl_quantile_upper_ns(s, 1.00), 1073741824u);
  EXPECT_EQ(exporter::ioctl_quantile_upper_ns(IoctlSeries{}, 0.5), 0u);
  const auto open = series(0, 1, {{exporter::kIoctlSlots - 1, 1}});
  EXPECT_EQ(exporter::ioctl_quantile_upper_ns(open, 0.5),
            std::numeric_limits<std::uint64_t>::max());
}

TEST(IoctlTable, ShowsEachDeviceAndRequestWithBoundsSaidToBeBounds) {
  // ALLOC: 100 calls in [4, 8) us and one stall in [1, 2) ms, which only the max shows.
  const auto r =
      report_of({series(1, 0xc0104601, {{12, 100}, {20, 1}}), series(0, 0x5401, {{10, 1}})});
  // The table as it prints.
  // clang-format off
  EXPECT_EQ(exporter::ioctl_latency_table(r),
            "device            request     ioc                calls  errors  mean_us  p50_le_us  p99_le_us  max_le_us\n"
            "/dev/nvidia0      0x00005401  _IO('T', 1)            1       0      1.5        2.0        2.0        2.0\n"
            "/tmp/mnt/fakegpu  0xc0104601  _IOWR('F', 1, 16)    101       0     21.7        8.2        8.2     2097.2\n"
            "p50/p99/max: upper bounds of log2 buckets (the true value is below, and at least half)\n");
  // clang-format on
  IoctlReport none = report_of({});
  none.targets.resize(1);
  EXPECT_EQ(exporter::ioctl_latency_table(none), "no ioctl on /dev/nvidia0 in 2.0 s\n");
}

TEST(IoctlMetrics, AreAValidHistogramWhoseBucketsHoldTheSlotsBelowThem) {
  const auto r = report_of({series(1, 0xc0104601, {{3, 2}, {12, 5}, {20, 1}, {39, 1}})});
  gpulab::prom::Exposition e;
  exporter::add_ioctl_latency_metrics(e, r);
  const std::string text = e.render();
  const auto parsed = gpulab::prom::parse(text);
  ASSERT_TRUE(parsed) << parsed.error().message << "\n" << text;
  const auto* h = parsed.value().find("device_ioctl_latency_seconds");
  ASSERT_NE(h, nullptr);
  ASSERT_EQ(h->upper_bounds().size(), 25u);
  EXPECT_DOUBLE_EQ(h->upper_bounds().front(), 1.024e-06);
  EXPECT_DOUBLE_EQ(h->upper_bounds().back(), 17.179869184);
  const auto* s = h->find({{"device", "/tmp/mnt/fakegpu"}, {"request", "0xc0104601"}});
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->cumulative[0], 2);   // le 1.024 us: slot 3 (8-16 ns) folds into the first bucket
  EXPECT_EQ(s->cumulative[2], 2);   // le 4.096 us
  EXPECT_EQ(s->cumulative[3], 7);   // le 8.192 us: slot 12 (4-8 us)
  EXPECT_EQ(s->cumulative[11], 8);  // le 2.097 ms: slot 20
  EXPECT_EQ(s->cumulative[24], 8);  // le 17.2 s: the 9-minute call is only in +Inf
  EXPECT_EQ(s->cumulative[25], 9);
  EXPECT_NE(text.find("device_ioctl_dropped_total{reason=\"inflight_full\"} 0\n"),
            std::string::npos);
  EXPECT_NE(
      text.find(
          "device_ioctl_errors_total{device=\"/tmp/mnt/fakegpu\",request=\"0xc0104601\"} 0\n"),
      std::string::npos);
}

TEST(IoctlMetrics, AreReadByTheExportersTextfileSource) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("ioctl-latency-textfile-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  gpulab::prom::Exposition e;
  exporter::add_ioctl_latency_metrics(e, report_of({series(0, 0x80604600, {{14, 4}})}));
  std::ofstream(dir / "ioctl.prom") << e.render();
  exporter::TextfileSource source(dir);
  gpulab::prom::Exposition out;
  const auto a = source.collect(out);
  std::filesystem::remove_all(dir);
  EXPECT_TRUE(a.warnings.empty()) << a.warnings.front();
  const auto* h = out.find("device_ioctl_latency_seconds");
  ASSERT_NE(h, nullptr);
  const auto* s = h->find({{"device", "/dev/nvidia0"}, {"request", "0x80604600"}});
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->cumulative.back(), 4);
}

TEST(IoctlTarget, ACharacterDeviceIsItsDeviceNumberInTheKernelsEncoding) {
  const auto t = exporter::resolve_ioctl_target("/dev/null");  // 1:3
  EXPECT_TRUE(t.chrdev);
  EXPECT_EQ(t.dev, (1u << 20) | 3u);
  EXPECT_EQ(t.ino, 0xffffffffffffffffull);
  EXPECT_EQ(exporter::kernel_dev(makedev(195, 255)), (195u << 20) | 255u);  // /dev/nvidiactl
}

std::string refusal(const std::vector<std::string>& paths) {
  try {
    (void)exporter::resolve_ioctl_targets(paths);
  } catch (const gpulab::UsageError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(IoctlTarget, RefusesWhatNoDriverAnswersNamingTheFlagAndPath) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("ioctl-latency-target-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "plain").string();
  std::ofstream(file) << "x";
  EXPECT_EQ(refusal({(dir / "absent").string()}),
            "--device: '" + (dir / "absent").string() + "': No such file or directory");
  EXPECT_EQ(refusal({dir.string()}),
            "--device: '" + dir.string() + "' is a directory, not a device file");
  EXPECT_EQ(refusal({file}), "--device: '" + file +
                                 "' is a plain file, not a device: give a character device "
                                 "(/dev/nvidia0) or a file a FUSE driver serves (fakegpud's "
                                 "MOUNTDIR/fakegpu)");
  EXPECT_EQ(refusal({""}), "--device: '' is empty: give a device file");
  EXPECT_EQ(refusal({}), "--device: give at least one device file");
  EXPECT_EQ(refusal({"/dev/null", "/dev/zero", "/dev/../dev/null"}),
            "--device: '/dev/null' and '/dev/../dev/null' are the same file");
  EXPECT_EQ(refusal(std::vector<std::string>(65, "/dev/null")),
            "--device: at most 64 device files, got 65");
  std::filesystem::remove_all(dir);
}

}  // namespace
