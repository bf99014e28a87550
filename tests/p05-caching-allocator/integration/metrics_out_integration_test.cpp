// caching-alloc replay|metrics --metrics-out FILE, run as a user would.
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

double value(const gpulab::prom::Exposition& e, const char* name) {
  const auto* f = e.find(name);
  if (f == nullptr || f->find({}) == nullptr) {
    ADD_FAILURE() << name << " missing";
    return -1;
  }
  return f->find({})->value;
}

TEST(CachingAllocMetricsOut, FragmentationTraceWritesTheOomAtSixtyPercent) {
  const fs::path out = fs::path(::testing::TempDir()) / "caching-alloc-frag.prom";
  fs::remove(out);
  const auto r = run_program(
      "caching-alloc",
      "replay traces/fragmentation-oom.csv --capacity-mib 100 --metrics-out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("OOMs 1"), std::string::npos) << r.out;
  const auto e = read_exposition(out);
  EXPECT_EQ(value(e, "allocator_reserved_bytes"), 104857600.0);
  EXPECT_EQ(value(e, "allocator_allocated_bytes"), 62914560.0);
  EXPECT_EQ(value(e, "allocator_largest_free_block_bytes"), 8388608.0);
  EXPECT_EQ(value(e, "allocator_oom_total"), 1.0);
}

TEST(CachingAllocMetricsOut, MetricsSubcommandWritesTheSameStateItPrints) {
  const fs::path out = fs::path(::testing::TempDir()) / "caching-alloc-sample.prom";
  fs::remove(out);
  const auto r =
      run_program("caching-alloc", "metrics traces/sample.csv --metrics-out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto e = read_exposition(out);
  // The printed exposition (gpulab_allocator_* names, per pool) and the file agree.
  EXPECT_NE(r.out.find("gpulab_allocator_cached_bytes 23068672"), std::string::npos);
  EXPECT_EQ(value(e, "allocator_reserved_bytes") - value(e, "allocator_allocated_bytes"),
            23068672.0);
  EXPECT_NE(r.out.find("gpulab_allocator_largest_cached_block_bytes 16567296"), std::string::npos);
  EXPECT_EQ(value(e, "allocator_largest_free_block_bytes"), 16567296.0);
  EXPECT_EQ(value(e, "allocator_oom_total"), 0.0);
}

TEST(CachingAllocMetricsOut, UnwritablePathIsAUsageError) {
  const auto r = run_program("caching-alloc",
                             "replay traces/sample.csv --metrics-out /nonexistent-dir/x.prom");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("caching-alloc: error: --metrics-out: ", 0), 0u) << r.err;
}

}  // namespace
