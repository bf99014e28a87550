// batching-sim --metrics-out FILE: every policy's serving metrics, and that
// they agree with what the program prints (--json).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "gpulab/prom_text.hpp"
#include "gpulab_test/exposition.hpp"
#include "gpulab_test/program_run.hpp"

namespace {

using gpulab_test::read_exposition;
using gpulab_test::run_program;
namespace fs = std::filesystem;

double value(const gpulab::prom::Exposition& e, const char* name, const char* policy) {
  const auto* f = e.find(name);
  const auto* s = f ? f->find({{"policy", policy}}) : nullptr;
  if (s == nullptr) {
    ADD_FAILURE() << name << "{policy=" << policy << "} missing";
    return -1;
  }
  return s->value;
}

TEST(BatchingMetricsOut, AdmissionPoliciesMatchTheJsonReport) {
  const fs::path out = fs::path(::testing::TempDir()) / "batching-admission.prom";
  fs::remove(out);
  const auto r = run_program("batching-sim", "admission --json --metrics-out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  const auto e = read_exposition(out);
  const char* slugs[] = {"admit-all", "cap-width", "cap-width-shed"};
  ASSERT_EQ(doc["rows"].size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& row = doc["rows"][i];
    EXPECT_EQ(value(e, "serving_requests_total", slugs[i]), 400.0) << slugs[i];
    EXPECT_EQ(value(e, "serving_good_requests_total", slugs[i]), row["slo_met"].get<double>())
        << slugs[i];
    const auto* ttft = e.find("serving_ttft_seconds")->find({{"policy", slugs[i]}});
    ASSERT_NE(ttft, nullptr);
    EXPECT_EQ(ttft->cumulative.back(), row["completed"].get<double>()) << slugs[i];
  }
  EXPECT_EQ(value(e, "serving_good_requests_total", "admit-all"), 0.0);  // the README's goodput 0
}

TEST(BatchingMetricsOut, PrefixCacheRunsCarryTheHitRatio) {
  const fs::path out = fs::path(::testing::TempDir()) / "batching-prefix.prom";
  fs::remove(out);
  const auto r = run_program("batching-sim", "prefix-cache --json --metrics-out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  const auto e = read_exposition(out);
  const auto& warm = doc["rows"][1];
  EXPECT_EQ(value(e, "kv_cache_prefix_hit_ratio", "no-prefix-cache"), 0.0);
  EXPECT_DOUBLE_EQ(value(e, "kv_cache_prefix_hit_ratio", "prefix-cache"),
                   warm["block_hits"].get<double>() / warm["block_lookups"].get<double>());
}

TEST(BatchingMetricsOut, MainRunWritesStaticAndContinuous) {
  const fs::path out = fs::path(::testing::TempDir()) / "batching-main.prom";
  fs::remove(out);
  const auto r =
      run_program("batching-sim", "--requests 100 --depths 16 --metrics-out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto e = read_exposition(out);
  EXPECT_EQ(value(e, "serving_requests_total", "static"), 100.0);
  EXPECT_EQ(value(e, "serving_requests_total", "continuous"), 100.0);
}

TEST(BatchingMetricsOut, UnwritablePathIsAUsageError) {
  const auto r =
      run_program("batching-sim", "admission --requests 10 --metrics-out /nonexistent-dir/x.prom");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("batching-sim: error: --metrics-out: ", 0), 0u) << r.err;
}

}  // namespace
