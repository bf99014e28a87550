// paged-kv --metrics-out FILE: block states of the default run, prefix-cache
// hit ratios, evict's preemptions; refused where there is no KV state.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "gpulab/prom_text.hpp"
#include "gpulab_test/exposition.hpp"
#include "gpulab_test/program_run.hpp"

namespace {

using gpulab_test::read_exposition;
using gpulab_test::run_program;
namespace fs = std::filesystem;

double value(const gpulab::prom::Exposition& e, const char* name, const gpulab::prom::Labels& l) {
  const auto* f = e.find(name);
  const auto* s = f ? f->find(l) : nullptr;
  if (s == nullptr) {
    ADD_FAILURE() << name << " missing";
    return -1;
  }
  return s->value;
}

TEST(PagedKvMetricsOut, DefaultRunWritesTheSharedPrefixPool) {
  const fs::path out = fs::path(::testing::TempDir()) / "paged-kv-default.prom";
  fs::remove(out);
  const auto r = run_program("paged-kv", "--metrics-out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto e = read_exposition(out);
  // The curriculum's 214 blocks with sharing: 64 prompt blocks shared by all 50 requests.
  EXPECT_EQ(value(e, "kv_cache_blocks", {{"state", "used"}}), 214.0);
  EXPECT_EQ(value(e, "kv_cache_blocks", {{"state", "free"}}), 4096.0 - 214.0);
  EXPECT_EQ(value(e, "kv_cache_blocks", {{"state", "shared"}}), 64.0);
}

TEST(PagedKvMetricsOut, EvictAndPrefixCacheWriteTheirCounters) {
  const fs::path ev = fs::path(::testing::TempDir()) / "paged-kv-evict.prom";
  fs::remove(ev);
  ASSERT_EQ(run_program("paged-kv", "evict --metrics-out " + ev.string()).exit_code, 0);
  const auto e = read_exposition(ev);
  EXPECT_EQ(value(e, "kv_cache_preemptions_total", {{"policy", "recompute"}}),
            8.0);  // the README's table
  EXPECT_EQ(value(e, "kv_cache_preemptions_total", {{"policy", "swap"}}), 8.0);

  const fs::path px = fs::path(::testing::TempDir()) / "paged-kv-prefix.prom";
  fs::remove(px);
  ASSERT_EQ(run_program("paged-kv", "prefix-cache --requests 200 --pools 1536,8192 --metrics-out " +
                                        px.string())
                .exit_code,
            0);
  const auto p = read_exposition(px);
  const double small = value(p, "kv_cache_prefix_hit_ratio", {{"pool_blocks", "1536"}});
  const double big = value(p, "kv_cache_prefix_hit_ratio", {{"pool_blocks", "8192"}});
  EXPECT_GT(small, 0.0);
  EXPECT_GE(big, small);  // a bigger pool evicts less and hits more
}

TEST(PagedKvMetricsOut, RefusedWhereThereIsNoKvState) {
  const auto r = run_program("paged-kv", "kv-math --metrics-out /tmp/never-written.prom");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("paged-kv: error: --metrics-out: 'kv-math' has no KV-cache state", 0), 0u)
      << r.err;
  const auto w = run_program("paged-kv", "evict --metrics-out /nonexistent-dir/x.prom");
  EXPECT_EQ(w.exit_code, 2);
  EXPECT_EQ(w.err.rfind("paged-kv: error: --metrics-out: ", 0), 0u) << w.err;
}

}  // namespace
