// paged-kv's reports without the program: the text is the README's, the JSON
// carries the same numbers, refused flag values are UsageErrors.
#include "paged_kv/reports.hpp"

#include <gtest/gtest.h>

#include <string>

#include "gpulab/errors.hpp"

namespace paged_kv {
namespace {

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

TEST(Reports, DemoRendersTheCurriculumTable) {
  const DemoReport r = run_demo({});
  EXPECT_TRUE(r.pass());
  const std::string text = render(r);
  EXPECT_TRUE(has(text, "naive contiguous (reserve max_len=2048)  :   32 sequences\n")) << text;
  EXPECT_TRUE(has(text, "paged (allocate-on-demand, actual=768)    :   85 sequences   (2.7x)\n"))
      << text;
  EXPECT_TRUE(has(text, "with sharing    :   214 blocks used   (15.7x less;")) << text;
  EXPECT_TRUE(has(text, "A freed                                              -        [0 2]"))
      << text;
  EXPECT_FALSE(has(text, "FAIL")) << text;
  const gpulab::Json j = to_json(r);
  EXPECT_EQ(j["paged_sequences"], 85);
  EXPECT_EQ(j["prefix_sharing"]["blocks_with_sharing"], 214);
  EXPECT_EQ(j["copy_on_write"]["checks"].size(), r.cow.checks.size());
}

TEST(Reports, DemoSaysWhenThePoolRunsOut) {
  DemoOptions o;
  o.pool_blocks = 100;  // 50 requests x 67 blocks do not fit; neither does the shared version
  const std::string text = render(run_demo(o));
  EXPECT_TRUE(has(text, "(pool exhausted: 1 of 50 requests fit)")) << text;
  EXPECT_TRUE(has(text, "ratio unknown: the pool is too small even with sharing")) << text;
}

TEST(Reports, DemoRefusesABlockAlignedCowPrefix) {
  DemoOptions o;
  o.cow_prefix = 32;
  EXPECT_THROW(run_demo(o), gpulab::UsageError);
}

TEST(Reports, KvMathSaysWhenTheWeightsDoNotFit) {
  KvMathOptions o;
  o.model = "llama-2-70b";
  o.hbm_gb = 80;
  o.context = 4096;
  const KvMathReport r = run_kv_math(o);
  const std::string text = render(r);
  EXPECT_TRUE(has(text, "KV per token    : 327,680 B (320.0 KiB) = 2 x 80 x 8 x 128 x 2 B\n"))
      << text;
  EXPECT_TRUE(has(text, "sequences fit   : 0 (the weights alone do not fit")) << text;
  EXPECT_EQ(to_json(r)["sequences_fit"], 0);
  o.model = "gpt-9";
  EXPECT_THROW(run_kv_math(o), gpulab::UsageError);
}

TEST(Reports, PrefixCacheOneRowPerPool) {
  PrefixOptions o;
  o.w.requests = 200;
  o.pools = {512, 4096};
  const PrefixReport r = run_prefix_cache(o, 3);
  ASSERT_EQ(r.runs.size(), 2U);
  const std::string text = render(r);
  EXPECT_TRUE(has(text, "== automatic prefix cache: 200 requests,")) << text;
  const gpulab::Json j = to_json(r);
  EXPECT_EQ(j["seed"], 3);
  EXPECT_EQ(j["runs"][1]["pool_blocks"], 4096);
  EXPECT_EQ(j["runs"][1]["block_hits"], r.runs[1].block_hits);
}

TEST(Reports, EvictComparesRecomputeAndSwap) {
  const EvictReport r = run_evict({});
  ASSERT_EQ(r.runs.size(), 2U);
  EXPECT_TRUE(r.pass());
  const std::string text = render(r);
  EXPECT_TRUE(has(text, "\nrecompute ")) << text;
  EXPECT_TRUE(has(text, "\nswap ")) << text;
  EXPECT_TRUE(has(text, "the two break even at")) << text;
  EXPECT_EQ(to_json(r)["runs"][1]["policy"], "swap");
  EvictOptions bad;
  bad.model = "gpt-9";
  EXPECT_THROW(run_evict(bad), gpulab::UsageError);
}

TEST(Reports, BeamAddsBeamSearchOnlyWhenForking) {
  BeamSpec spec;
  spec.fork_every = 0;
  EXPECT_EQ(run_beam(spec, 1).runs.size(), 1U);
  spec.fork_every = 16;
  const BeamReport r = run_beam(spec, 1);
  ASSERT_EQ(r.runs.size(), 2U);
  EXPECT_TRUE(r.pass());
  const std::string text = render(r);
  EXPECT_TRUE(has(text, "beam search (prune+fork every 16)")) << text;
  EXPECT_FALSE(has(text, "FAIL")) << text;
  EXPECT_EQ(to_json(r)["runs"][0]["mode"], "parallel sampling");
}

TEST(Reports, SweepQuickSamples500AndPlotsBothSeries) {
  SweepOptions o;
  o.sizes = {8, 16};
  const SweepReport r = run_sweep(o, 1, true);
  EXPECT_EQ(r.lengths.size(), 500U);
  ASSERT_EQ(r.rows.size(), 2U);
  const std::string text = render(r);
  EXPECT_TRUE(has(text, "== block size sweep: 500 sequences,")) << text;
  EXPECT_TRUE(has(text, "seqs in 65,536 tokens")) << text;
  EXPECT_EQ(to_json(r)["rows"][1]["block_size"], 16);
  const gpulab::PlotSpec plot = sweep_plot(r);
  ASSERT_EQ(plot.series.size(), 2U);
  EXPECT_EQ(plot.series[0].x.size(), 2U);
  o.sizes = {0};
  EXPECT_THROW(run_sweep(o, 1, true), gpulab::UsageError);
}

}  // namespace
}  // namespace paged_kv
