// Failure drills (docs/runbooks/): each test runs the lab command its runbook
// names, checks the detecting metric in what the command wrote, then turns
// those real values into promtool input series — the state before the failure,
// then the values the run produced — and runs `promtool test rules` with the
// SLO pack's rules (labs/p10-exporter/slo/rules) to prove that the runbook's
// alert fires on them, and that a healthy run of the same command does not.
//
// A drill skips (with the reason) when promtool is not installed or when the
// lab it needs is not part of this build (GPULAB_LABS).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "gpulab/prom_text.hpp"
#include "gpulab_test/program_run.hpp"

namespace {

namespace fs = std::filesystem;
using gpulab::prom::Exposition;
using gpulab::prom::Labels;
using gpulab::prom::MetricType;
using gpulab_test::ProgramRun;
using gpulab_test::run_program;

const fs::path kLabDir = GPULAB_LAB_DIR;  // labs/p10-exporter
const fs::path kRulesDir = kLabDir / "slo" / "rules";

std::optional<fs::path> find_promtool() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path p = fs::path(dir) / "promtool";
    if (!dir.empty() && ::access(p.c_str(), X_OK) == 0) return p;
  }
  return std::nullopt;
}

bool built(const std::string& program) {
  return fs::exists(fs::path(GPULAB_BIN_DIR) / program);
}

#define REQUIRE_DRILL_TOOLS(program)                                                         \
  do {                                                                                       \
    if (!find_promtool()) GTEST_SKIP() << "promtool not found (apt-get install prometheus)"; \
    if (!built(program))                                                                     \
      GTEST_SKIP() << program << " is not built (its lab is not in GPULAB_LABS)";            \
  } while (0)

// A fresh directory per test (ctest runs tests in parallel).
fs::path scratch_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path dir =
      fs::path(::testing::TempDir()) / (std::string("slo-drill-") + info->test_suite_name() + "-" +
                                        info->name() + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}

// promtool with `args` (through the shell): its wait status and everything it printed.
struct PromtoolRun {
  int status = -1;
  std::string report;
};
PromtoolRun promtool(const std::string& args) {
  PromtoolRun r;
  const std::string cmd = "'" + find_promtool()->string() + "' " + args + " 2>&1";
  if (FILE* pipe = ::popen(cmd.c_str(), "r")) {
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) r.report.append(buf, n);
    r.status = ::pclose(pipe);
  }
  return r;
}

// promtool's own lint (names, units, _total, HELP) on a file a drill produced.
void expect_promtool_clean(const fs::path& p) {
  const PromtoolRun r = promtool("check metrics < '" + p.string() + "'");
  EXPECT_EQ(r.status, 0) << "promtool check metrics " << p << ":\n" << r.report;
}

Exposition parse_file(const fs::path& p) {
  expect_promtool_clean(p);
  const std::string text = read_file(p);
  auto parsed = gpulab::prom::parse(text);
  if (!parsed) {
    ADD_FAILURE() << p << " is not a valid exposition: " << parsed.error().message << "\n" << text;
    return {};
  }
  return std::move(parsed).value();
}

// The value of one series, or nullopt when the family or the series is missing.
std::optional<double> value_of(const Exposition& e, const std::string& name, const Labels& labels) {
  const auto* f = e.find(name);
  if (f == nullptr) return std::nullopt;
  const auto* s = f->find(labels);
  if (s == nullptr) return std::nullopt;
  return s->value;
}

// ---- the exposition as promtool input series --------------------------------

struct InputSeries {
  std::string selector;  // name{label="value",...}
  std::string values;    // promtool's expanding notation
};

std::string selector(const std::string& name, const Labels& labels) {
  std::string s = name + "{";
  for (std::size_t i = 0; i < labels.size(); ++i)
    s += (i ? "," : "") + labels[i].first + "=\"" +
         gpulab::prom::escape_label_value(labels[i].second) + "\"";
  return s + "}";
}

// One sample per family series, histograms expanded to _bucket/_sum/_count.
struct Sample {
  std::string name;
  Labels labels;
  double value = 0;
  bool cumulative = false;  // counter or histogram part: grows while the run runs
};

std::vector<Sample> samples(const Exposition& e, const std::function<bool(const Labels&)>& keep,
                            const Labels& extra) {
  std::vector<Sample> out;
  for (const std::string& name : e.names()) {
    const auto* f = e.find(name);
    for (auto [labels, series] : f->series()) {
      if (!keep(labels)) continue;
      labels.insert(labels.end(), extra.begin(), extra.end());
      if (f->type() != MetricType::kHistogram) {
        out.push_back({name, labels, series.value, f->type() == MetricType::kCounter});
        continue;
      }
      const auto& bounds = f->upper_bounds();
      for (std::size_t i = 0; i < series.cumulative.size(); ++i) {
        Labels with_le = labels;
        with_le.emplace_back("le",
                             i < bounds.size() ? gpulab::prom::format_value(bounds[i]) : "+Inf");
        out.push_back({name + "_bucket", with_le, series.cumulative[i], true});
      }
      out.push_back({name + "_sum", labels, series.sum, true});
      out.push_back({name + "_count", labels, series.cumulative.back(), true});
    }
  }
  return out;
}

std::string fmt_value(double v) {
  return gpulab::prom::format_value(v);
}

// The run drops its file at minute `before`: absent until then, then its
// values for `after` more minutes (how a textfile the exporter re-exposes looks).
std::vector<InputSeries> appear(const Exposition& e, int before, int after,
                                const std::function<bool(const Labels&)>& keep,
                                const Labels& extra) {
  std::vector<InputSeries> out;
  for (const Sample& s : samples(e, keep, extra))
    out.push_back(
        {selector(s.name, s.labels),
         "_x" + std::to_string(before) + " " + fmt_value(s.value) + "x" + std::to_string(after)});
  return out;
}

// A long-running server's view of the same run: its requests arrive evenly
// over `minutes`, so every counter grows linearly from 0 to the run's value
// (ratios of rates, the SLIs, are exactly the run's ratios).
std::vector<InputSeries> ramp(const Exposition& e, int minutes,
                              const std::function<bool(const Labels&)>& keep, const Labels& extra) {
  std::vector<InputSeries> out;
  for (const Sample& s : samples(e, keep, extra)) {
    const std::string v = s.cumulative
                              ? "0+" + fmt_value(s.value / minutes) + "x" + std::to_string(minutes)
                              : fmt_value(s.value) + "x" + std::to_string(minutes);
    out.push_back({selector(s.name, s.labels), v});
  }
  return out;
}

// Two expositions of one source: the first for `first` minutes, then the second.
// A series only in the second is absent at first (it was born with the fault).
std::vector<InputSeries> before_after(const Exposition& a, const Exposition& b, int first, int then,
                                      const Labels& extra) {
  const auto all = [](const Labels&) { return true; };
  std::vector<Sample> sa = samples(a, all, extra);
  std::vector<InputSeries> out;
  for (const Sample& s : samples(b, all, extra)) {
    std::string head = "_x" + std::to_string(first);
    for (const Sample& o : sa)
      if (o.name == s.name && o.labels == s.labels)
        head = fmt_value(o.value) + "x" + std::to_string(first - 1);
    out.push_back(
        {selector(s.name, s.labels), head + " " + fmt_value(s.value) + "x" + std::to_string(then)});
  }
  return out;
}

const Labels kDrillTarget{{"instance", "drill"}, {"job", "drill"}};
const auto kAll = [](const Labels&) { return true; };
std::function<bool(const Labels&)> label_is(const std::string& name, const std::string& value) {
  return [=](const Labels& ls) {
    for (const auto& [n, v] : ls)
      if (n == name) return v == value;
    return false;
  };
}

// ---- promtool test rules -----------------------------------------------------

struct AlertCheck {
  std::string eval_time;
  std::string alertname;
  std::string exp_alerts_yaml;  // "" = expect none; else the YAML list items, 10-space indent
};

struct PromtoolCase {
  std::string name;
  std::vector<InputSeries> series;
  std::vector<AlertCheck> alerts;
};

// Expected alert in promtool's YAML: labels and annotations as flow maps.
std::string expect_alert(const std::string& labels, const std::string& summary,
                         const std::string& runbook) {
  return "          - exp_labels: {" + labels +
         "}\n            exp_annotations:\n              summary: \"" + summary +
         "\"\n              runbook_url: docs/runbooks/" + runbook + "\n";
}

// Writes the test file next to the run's outputs and runs promtool on it;
// the assertion message carries promtool's report and the file.
::testing::AssertionResult promtool_passes(const fs::path& dir,
                                           const std::vector<PromtoolCase>& cases) {
  std::string y = "rule_files:\n";
  for (const char* f : {"slo.rules.yml", "alerts.rules.yml"})
    y += "  - " + (kRulesDir / f).string() + "\n";
  y += "evaluation_interval: 1m\ntests:\n";
  for (const auto& c : cases) {
    y += "  - name: \"" + c.name + "\"\n    interval: 1m\n    input_series:\n";
    for (const auto& s : c.series)
      y += "      - series: '" + s.selector + "'\n        values: '" + s.values + "'\n";
    y += "    alert_rule_test:\n";
    for (const auto& a : c.alerts) {
      y += "      - eval_time: " + a.eval_time + "\n        alertname: " + a.alertname + "\n";
      y += a.exp_alerts_yaml.empty() ? "        exp_alerts: []\n"
                                     : "        exp_alerts:\n" + a.exp_alerts_yaml;
    }
  }
  const fs::path file = dir / "drill.test.yml";
  std::ofstream(file) << y;
  const PromtoolRun r = promtool("test rules '" + file.string() + "'");
  if (r.status == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "promtool test rules failed (status " << r.status << "):\n"
         << r.report << "\n--- " << file << "\n"
         << y;
}

// ---- the drills ----------------------------------------------------------------

// docs/runbooks/allreduce-hang-dead-rank.md
TEST(SloDrill, AllreduceDeadRankFiresCollectiveTimeout) {
  REQUIRE_DRILL_TOOLS("ring-allreduce");
  const fs::path dir = scratch_dir();
  const fs::path out = dir / "allreduce.prom";
  const ProgramRun r = run_program(
      "ring-allreduce", "--world 4 --kill-rank 2 --kill-step 3 --timeout-ms 500 --metrics-out '" +
                            out.string() + "'");
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  ASSERT_NE(r.out.find("FAIL: rank 2 died mid-collective"), std::string::npos) << r.out;
  const Exposition e = parse_file(out);
  for (const char* rank : {"0", "1", "3"}) {
    EXPECT_EQ(value_of(e, "allreduce_timeouts_total", {{"rank", rank}}), 1.0) << "rank " << rank;
    EXPECT_EQ(value_of(e, "allreduce_operations_total", {{"rank", rank}}), 1.0) << "rank " << rank;
  }
  EXPECT_EQ(value_of(e, "allreduce_operations_total", {{"rank", "2"}}), std::nullopt)
      << "the dead rank reports nothing";

  EXPECT_TRUE(promtool_passes(
      dir,
      {{"the survivors' timeouts page once their file appears, and resolve",
        appear(e, 10, 20, kAll, kDrillTarget),
        {{"9m", "CollectiveTimeout", ""},
         {"11m", "CollectiveTimeout",
          expect_alert(
              "severity: page, instance: drill, job: drill",
              "ranks of an all-reduce on drill hit the watchdog timeout: a peer is dead or stuck",
              "allreduce-hang-dead-rank.md")},
         {"25m", "CollectiveTimeout", ""}}}}));
}

TEST(SloDrill, AllreduceHealthyRunDoesNotFire) {
  REQUIRE_DRILL_TOOLS("ring-allreduce");
  const fs::path dir = scratch_dir();
  const fs::path out = dir / "allreduce.prom";
  const ProgramRun r = run_program(
      "ring-allreduce", "--world 4 --timeout-ms 5000 --metrics-out '" + out.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const Exposition e = parse_file(out);
  for (const char* rank : {"0", "1", "2", "3"}) {
    EXPECT_EQ(value_of(e, "allreduce_timeouts_total", {{"rank", rank}}), 0.0) << "rank " << rank;
    // 80,000 doubles on 4 ranks: 2(N-1)/N x V = 960,000 bytes per rank
    EXPECT_EQ(value_of(e, "allreduce_bytes_total", {{"rank", rank}}), 960000.0) << "rank " << rank;
  }
  EXPECT_TRUE(promtool_passes(
      dir, {{"a healthy all-reduce never pages",
             appear(e, 10, 20, kAll, kDrillTarget),
             {{"11m", "CollectiveTimeout", ""}, {"15m", "CollectiveTimeout", ""}}}}));
}

// docs/runbooks/allocator-fragmentation-oom.md
TEST(SloDrill, FragmentationOomAtSixtyPercentFires) {
  REQUIRE_DRILL_TOOLS("caching-alloc");
  const fs::path dir = scratch_dir();
  const fs::path out = dir / "alloc.prom";
  const fs::path trace =
      kLabDir / ".." / "p05-caching-allocator" / "traces" / "fragmentation-oom.csv";
  const ProgramRun r =
      run_program("caching-alloc", "replay '" + trace.string() +
                                       "' --capacity-mib 100 --metrics-out '" + out.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_NE(r.out.find("OOMs 1"), std::string::npos) << r.out;
  const Exposition e = parse_file(out);
  EXPECT_EQ(value_of(e, "allocator_reserved_bytes", {}), 100.0 * 1048576);
  EXPECT_EQ(value_of(e, "allocator_allocated_bytes", {}), 60.0 * 1048576);  // 60% utilisation
  EXPECT_EQ(value_of(e, "allocator_largest_free_block_bytes", {}), 8.0 * 1048576);
  EXPECT_EQ(value_of(e, "allocator_oom_total", {}), 1.0);

  // And the control: the sample trace fits and never OOMs.
  const fs::path ok_out = dir / "alloc-ok.prom";
  const fs::path sample = kLabDir / ".." / "p05-caching-allocator" / "traces" / "sample.csv";
  ASSERT_EQ(run_program("caching-alloc",
                        "replay '" + sample.string() + "' --metrics-out '" + ok_out.string() + "'")
                .exit_code,
            0);
  const Exposition ok = parse_file(ok_out);
  EXPECT_EQ(value_of(ok, "allocator_oom_total", {}), 0.0);

  EXPECT_TRUE(promtool_passes(
      dir, {{"an OOM with 40% of reserved memory free pages",
             appear(e, 10, 20, kAll, kDrillTarget),
             {{"9m", "AllocatorFragmentationOom", ""},
              {"11m", "AllocatorFragmentationOom",
               expect_alert("severity: page, instance: drill, job: drill",
                            "drill: out of memory with 20%+ of reserved memory free: fragmentation",
                            "allocator-fragmentation-oom.md")},
              {"20m", "AllocatorFragmentationOom", ""}}},
            {"the sample trace does not",
             appear(ok, 10, 20, kAll, kDrillTarget),
             {{"11m", "AllocatorFragmentationOom", ""}}}}));
}

// docs/runbooks/kv-cache-exhaustion.md
TEST(SloDrill, KvCacheExhaustionFiresOnPreemptions) {
  REQUIRE_DRILL_TOOLS("paged-kv");
  const fs::path dir = scratch_dir();
  const fs::path out = dir / "kv.prom";
  const ProgramRun r = run_program("paged-kv", "evict --metrics-out '" + out.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const Exposition e = parse_file(out);
  EXPECT_EQ(value_of(e, "kv_cache_preemptions_total", {{"policy", "recompute"}}), 8.0);
  EXPECT_EQ(value_of(e, "kv_cache_preemptions_total", {{"policy", "swap"}}), 8.0);

  // Control: a pool big enough for all 24 sequences (1536 blocks) never preempts.
  const fs::path ok_out = dir / "kv-ok.prom";
  ASSERT_EQ(
      run_program("paged-kv", "evict --pool-blocks 1536 --metrics-out '" + ok_out.string() + "'")
          .exit_code,
      0);
  const Exposition ok = parse_file(ok_out);
  EXPECT_EQ(value_of(ok, "kv_cache_preemptions_total", {{"policy", "recompute"}}), 0.0);

  EXPECT_TRUE(promtool_passes(
      dir,
      {{"preemptions raise the KV warning, which clears",
        appear(e, 10, 30, kAll, kDrillTarget),
        {{"9m", "KvCacheExhausted", ""},
         {"11m", "KvCacheExhausted",
          expect_alert("severity: warning, instance: drill, job: drill",
                       "drill: the KV cache ran dry and preempted sequences in the last 10 minutes",
                       "kv-cache-exhaustion.md")},
         {"25m", "KvCacheExhausted", ""}}},
       {"a pool that fits stays quiet",
        appear(ok, 10, 30, kAll, kDrillTarget),
        {{"11m", "KvCacheExhausted", ""}}}}));
}

// docs/runbooks/kv-cache-exhaustion.md: the serving side, overload without admission control.
TEST(SloDrill, AdmitEverythingBurnsGoodput) {
  REQUIRE_DRILL_TOOLS("batching-sim");
  const fs::path dir = scratch_dir();
  const fs::path out = dir / "serving.prom";
  const ProgramRun r =
      run_program("batching-sim", "admission --metrics-out '" + out.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const Exposition e = parse_file(out);
  EXPECT_EQ(value_of(e, "serving_requests_total", {{"policy", "admit-all"}}), 400.0);
  EXPECT_EQ(value_of(e, "serving_good_requests_total", {{"policy", "admit-all"}}), 0.0);

  const std::string goodput_page = expect_alert(
      "severity: page, slo: serving-goodput",
      "serving-goodput: error budget burning fast: too many requests missed TTFT or TPOT",
      "kv-cache-exhaustion.md");
  EXPECT_TRUE(
      promtool_passes(dir, {{"admitting everything: no request meets both SLOs, goodput pages",
                             ramp(e, 60, label_is("policy", "admit-all"), kDrillTarget),
                             {{"59m", "ServingGoodputBudgetBurnFast", goodput_page}}},
                            {"SLO-aware admission: what is served meets TTFT",
                             ramp(e, 60, label_is("policy", "cap-width-shed"), kDrillTarget),
                             {{"59m", "ServingTtftBudgetBurnFast", ""}}}}));
}

// docs/runbooks/ttft-spike-cold-prefix-cache.md
TEST(SloDrill, ColdPrefixCacheBurnsTtft) {
  REQUIRE_DRILL_TOOLS("batching-sim");
  const fs::path dir = scratch_dir();
  const fs::path out = dir / "serving.prom";
  const ProgramRun r =
      run_program("batching-sim", "prefix-cache --metrics-out '" + out.string() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const Exposition e = parse_file(out);
  EXPECT_EQ(value_of(e, "kv_cache_prefix_hit_ratio", {{"policy", "no-prefix-cache"}}), 0.0);
  const auto warm = value_of(e, "kv_cache_prefix_hit_ratio", {{"policy", "prefix-cache"}});
  ASSERT_TRUE(warm.has_value());
  EXPECT_GT(*warm, 0.9);  // the README's 93.9% block hit rate

  const std::string cold_warning =
      expect_alert("severity: warning, instance: drill, job: drill",
                   "drill: prefix-cache hit ratio under 20%; TTFT pays full prefill",
                   "ttft-spike-cold-prefix-cache.md");
  const std::string ttft_page =
      expect_alert("severity: page, slo: serving-ttft",
                   "serving-ttft: error budget burning fast: too many requests with TTFT >= 300 ms",
                   "ttft-spike-cold-prefix-cache.md");
  EXPECT_TRUE(promtool_passes(
      dir, {{"no prefix cache: TTFT pages and the cache warning fires",
             ramp(e, 60, label_is("policy", "no-prefix-cache"), kDrillTarget),
             {{"59m", "ServingTtftBudgetBurnFast", ttft_page},
              {"59m", "PrefixCacheCold", cold_warning}}},
            {"a warm prefix cache neither warns nor pages (4.5% of TTFTs miss: under the 6x line)",
             ramp(e, 60, label_is("policy", "prefix-cache"), kDrillTarget),
             {{"59m", "PrefixCacheCold", ""}, {"59m", "ServingTtftBudgetBurnFast", ""}}}}));
}

// docs/runbooks/xid-79-fell-off-the-bus.md and xid-48-double-bit-ecc.md: the
// simulated fleet before (20 s) and after (60 s) a fault injected at 30 s.
struct FleetRun {
  Exposition before, after;
};

FleetRun simulate_fault(const fs::path& dir, const std::string& inject) {
  FleetRun runs;
  for (const char* at : {"20s", "60s"}) {
    const fs::path out = dir / (std::string("fleet-") + at + ".prom");
    const ProgramRun r =
        run_program("gpu-exporter", "--simulate 8 --seed 1 --inject " + inject + " --at " + at +
                                        " --once > '" + out.string() + "'");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    (std::string(at) == "20s" ? runs.before : runs.after) = parse_file(out);
  }
  return runs;
}

TEST(SloDrill, Xid79PagesForTheGpuThatFellOff) {
  REQUIRE_DRILL_TOOLS("gpu-exporter");
  const fs::path dir = scratch_dir();
  const FleetRun f = simulate_fault(dir, "xid:79:3@30s");
  const auto* xid = f.after.find("gpu_xid_errors_total");
  ASSERT_NE(xid, nullptr) << "no Xid counter after the fault";
  double xid79_gpu3 = 0;
  for (const auto& [labels, series] : xid->series()) {
    const bool gpu3 = label_is("gpu", "3")(labels);
    if (gpu3 && label_is("xid", "79")(labels)) xid79_gpu3 = series.value;
    EXPECT_TRUE(gpu3) << "an Xid on another GPU";
  }
  EXPECT_EQ(xid79_gpu3, 1.0);
  EXPECT_EQ(f.before.find("gpu_xid_errors_total"), nullptr) << "an Xid before the fault";

  EXPECT_TRUE(promtool_passes(
      dir, {{"Xid 79 on GPU 3 pages for GPU 3 only, then resolves",
             before_after(f.before, f.after, 20, 20, kDrillTarget),
             {{"19m", "GpuFellOffTheBus", ""},
              {"21m", "GpuFellOffTheBus",
               expect_alert("severity: page, instance: drill, gpu: \"3\"",
                            "GPU 3 on drill: Xid 79, the GPU has fallen off the bus",
                            "xid-79-fell-off-the-bus.md")},
              {"21m", "GpuDoubleBitEccError", ""},
              {"30m", "GpuFellOffTheBus", ""}}}}));
}

TEST(SloDrill, Xid48PagesAsDoubleBitEcc) {
  REQUIRE_DRILL_TOOLS("gpu-exporter");
  const fs::path dir = scratch_dir();
  const FleetRun f = simulate_fault(dir, "xid:48:5@30s");
  const auto* ecc = f.after.find("gpu_ecc_errors_total");
  ASSERT_NE(ecc, nullptr);
  double dbe_gpu5 = 0;
  for (const auto& [labels, series] : ecc->series())
    if (label_is("gpu", "5")(labels) && label_is("type", "double_bit")(labels))
      dbe_gpu5 = series.value;
  EXPECT_EQ(dbe_gpu5, 1.0);

  EXPECT_TRUE(
      promtool_passes(dir, {{"Xid 48 on GPU 5 pages as a double-bit ECC error, not as a lost GPU",
                             before_after(f.before, f.after, 20, 20, kDrillTarget),
                             {{"19m", "GpuDoubleBitEccError", ""},
                              {"21m", "GpuDoubleBitEccError",
                               expect_alert("severity: page, instance: drill, gpu: \"5\"",
                                            "GPU 5 on drill: double-bit ECC error (Xid 48)",
                                            "xid-48-double-bit-ecc.md")},
                              {"21m", "GpuFellOffTheBus", ""},
                              {"30m", "GpuDoubleBitEccError", ""}}}}));
}

// docs/runbooks/driver-toolkit-skew.md: the same exporter against a stand-in
// NVML, first initialising (before the upgrade), then reporting the mismatch.
TEST(SloDrill, DriverLibraryMismatchLosesNvml) {
#ifndef GPULAB_DRILL_NVML
  GTEST_SKIP() << "the stand-in NVML is built by tests/p10-exporter/drills.cmake, which this build "
                  "does not include";
#else
  REQUIRE_DRILL_TOOLS("gpu-exporter");
  const fs::path dir = scratch_dir();
  const std::string args = std::string("--once --nvml-lib '") + GPULAB_DRILL_NVML +
                           "' --fakegpu-stats '" + (dir / "no-fakegpu").string() + "'";
  const ProgramRun before =
      run_program("gpu-exporter", args + " > '" + (dir / "before.prom").string() + "'",
                  gpulab_test::Stderr::kSeparate, "env DRILL_NVML_INIT_RESULT=0");
  ASSERT_EQ(before.exit_code, 0) << before.err;
  const ProgramRun after =
      run_program("gpu-exporter", args + " > '" + (dir / "after.prom").string() + "'");
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_NE(after.err.find("Driver/library version mismatch"), std::string::npos) << after.err;
  const Exposition b = parse_file(dir / "before.prom");
  const Exposition a = parse_file(dir / "after.prom");
  EXPECT_EQ(value_of(b, "gpu_exporter_source_up", {{"source", "nvml"}}), 1.0);
  EXPECT_EQ(value_of(a, "gpu_exporter_source_up", {{"source", "nvml"}}), 0.0);

  EXPECT_TRUE(promtool_passes(
      dir,
      {{"NVML lost after it had worked pages after 5 minutes",
        before_after(b, a, 30, 20, kDrillTarget),
        {{"33m", "GpuNvmlSourceLost", ""},
         {"37m", "GpuNvmlSourceLost",
          expect_alert(
              "severity: page, instance: drill",
              "drill: gpu-exporter lost NVML (driver/library version mismatch after an upgrade?)",
              "driver-toolkit-skew.md")}}}}));
#endif
}

// docs/runbooks/stale-hal-backend.md: hal-demo refuses the backend built for ABI v1.
TEST(SloDrill, StaleHalBackendIsRejected) {
  if (!built("hal-demo"))
    GTEST_SKIP() << "hal-demo is not built (lab p09-hal is not in GPULAB_LABS)";
  const ProgramRun r = run_program("hal-demo", "");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto at = r.out.find("rejected backend: stale");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_NE(r.out.substr(at, r.out.find('\n', at) - at).find("(abi v1 != core v2)"),
            std::string::npos)
      << r.out;
}

// docs/runbooks/gpu-clock-throttle.md: the simulator's thermal fault holds GPU 1 at 93 °C and
// 1.2 GHz; a ticket after 5 minutes, for that GPU only.
TEST(SloDrill, ThermalThrottleTicketsAfterFiveMinutes) {
  REQUIRE_DRILL_TOOLS("gpu-exporter");
  const fs::path dir = scratch_dir();
  const FleetRun f = simulate_fault(dir, "thermal:1@30s");
  const auto* throttled = f.after.find("gpu_throttled");
  ASSERT_NE(throttled, nullptr);
  double thermal_gpu1 = 0, thermal_others = 0;
  for (const auto& [labels, series] : throttled->series())
    if (label_is("reason", "thermal")(labels))
      (label_is("gpu", "1")(labels) ? thermal_gpu1 : thermal_others) += series.value;
  EXPECT_EQ(thermal_gpu1, 1.0);
  EXPECT_EQ(thermal_others, 0.0);

  EXPECT_TRUE(promtool_passes(
      dir, {{"thermal throttling on GPU 1 tickets after 5 minutes, power cap stays silent",
             before_after(f.before, f.after, 20, 20, kDrillTarget),
             {{"19m", "GpuThermalThrottling", ""},
              {"23m", "GpuThermalThrottling", ""},
              {"26m", "GpuThermalThrottling",
               expect_alert("severity: ticket, instance: drill, gpu: \"1\"",
                            "GPU 1 on drill: clocks thermally throttled for 5 minutes",
                            "gpu-clock-throttle.md")},
              {"38m", "GpuPowerCapped", ""}}}}));
}

// The same runbook's power-cap fault: silent at 14 minutes, a ticket at 16.
TEST(SloDrill, PowerCapTicketsAfterFifteenMinutes) {
  REQUIRE_DRILL_TOOLS("gpu-exporter");
  const fs::path dir = scratch_dir();
  const FleetRun f = simulate_fault(dir, "power:4@30s");
  EXPECT_TRUE(promtool_passes(
      dir, {{"a power cap on GPU 4 tickets after 15 minutes",
             before_after(f.before, f.after, 20, 20, kDrillTarget),
             {{"34m", "GpuPowerCapped", ""},
              {"36m", "GpuPowerCapped",
               expect_alert("severity: ticket, instance: drill, gpu: \"4\"",
                            "GPU 4 on drill: clocks held at the power cap for 15 minutes",
                            "gpu-clock-throttle.md")},
              {"36m", "GpuThermalThrottling", ""}}}}));
}

// docs/runbooks/gpu-memory-leak.md: the simulator's leak on GPU 0, measured as bytes per
// simulated second between two runs, replayed at one simulated second per minute (a leak that
// fills the GPU in about an hour). A ramp tickets; a step of the same final size — a model
// loading — never does.
TEST(SloDrill, MemoryLeakTicketsOnARampNotOnAStep) {
  REQUIRE_DRILL_TOOLS("gpu-exporter");
  const fs::path dir = scratch_dir();
  const FleetRun f = simulate_fault(dir, "leak:0@30s");
  ASSERT_NE(f.before.find("gpu_memory_free_bytes"), nullptr);
  const Labels gpu0 = [&] {
    for (const auto& [labels, series] : f.before.find("gpu_memory_free_bytes")->series())
      if (label_is("gpu", "0")(labels)) return labels;
    return Labels{};
  }();
  ASSERT_FALSE(gpu0.empty());
  const double free_before = *value_of(f.before, "gpu_memory_free_bytes", gpu0);
  const double free_after = *value_of(f.after, "gpu_memory_free_bytes", gpu0);
  const double per_second = (free_before - free_after) / 30.0;  // the leak runs 30 s to 60 s
  EXPECT_NEAR(per_second, 512.0 * 1024 * 1024, 1024.0 * 1024 * 1024) << free_before << " " << free_after;
  // At one simulated second per minute the GPU is full after `full` minutes of leak. The
  // regression predicts "full within the hour" once fewer than 60 minutes are left, and the
  // alert fires 30 minutes after that; the leak starts at minute 9 of the drill.
  const double full = free_before / per_second;
  ASSERT_GT(full, 62) << "the leak would fill the GPU before the alert could fire";
  const int fires_at = 9 + static_cast<int>(std::ceil(full - 60)) + 30;
  const int length = fires_at + 10;  // minutes of leak, still short of full

  Labels labels = gpu0;
  labels.insert(labels.end(), kDrillTarget.begin(), kDrillTarget.end());
  const std::string sel = selector("gpu_memory_free_bytes", labels);
  const std::string start = fmt_value(free_before);
  const std::string n = std::to_string(length);
  const std::vector<InputSeries> ramp{{sel, start + "x9 " + start + "-" + fmt_value(per_second) + "x" + n}};
  const std::vector<InputSeries> step{
      {sel, start + "x9 " + fmt_value(free_before - 40 * per_second) + "x" + n}};
  const auto at = [](int minute) { return std::to_string(minute) + "m"; };
  EXPECT_TRUE(promtool_passes(
      dir, {{"a steady leak on GPU 0 tickets 30 minutes after it would fill the GPU within the hour",
             ramp,
             {{at(fires_at - 4), "GpuMemoryLeak", ""},
              {at(fires_at + 4), "GpuMemoryLeak",
               expect_alert("severity: ticket, instance: drill, gpu: \"0\"",
                            "GPU 0 on drill: memory use has grown for 30 minutes and at this rate "
                            "fills the GPU within an hour",
                            "gpu-memory-leak.md")}}},
            {"the same memory taken in one step (a model load) never tickets",
             step,
             {{"20m", "GpuMemoryLeak", ""},
              {"30m", "GpuMemoryLeak", ""},
              {at(fires_at + 4), "GpuMemoryLeak", ""}}}}));
}

}  // namespace
