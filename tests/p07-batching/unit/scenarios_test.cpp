// The renderers of batching-sim's runs, without the program: the text is the
// README's, the JSON carries the same numbers.
#include "batching/scenarios.hpp"

#include <gtest/gtest.h>

#include <string>

#include "gpulab/errors.hpp"

namespace batching {
namespace {

ServerSetup small_setup() {
  ServerSetup s;
  s.workload.requests = 200;
  s.seed = 7;
  return s;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Scenarios, MainReportRendersEveryDepthAndTheOptimum) {
  MainOptions o;
  o.depths = {4, 16};
  const MainReport r = run_main(small_setup(), o);
  ASSERT_EQ(r.sweep.size(), 2U);
  const std::string text = render(r);
  EXPECT_EQ(text.rfind("== static vs continuous batching (Poisson load) ==\n", 0), 0U) << text;
  EXPECT_NE(text.find("goodput-optimal batch depth: " + std::to_string(o.depths[r.best]) + "\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("workload: 200 requests, Poisson"), std::string::npos) << text;
  EXPECT_NE(text.find("seed 7\n"), std::string::npos) << text;
  const gpulab::Json j = to_json(r);
  EXPECT_EQ(j["requests"], 200);
  EXPECT_EQ(j["seed"], 7);
  EXPECT_EQ(j["sweep"].size(), 2U);
  EXPECT_EQ(j["goodput_optimal_max_batch"], o.depths[r.best]);
  EXPECT_EQ(j["static"]["completed"], r.stat.completed);
  EXPECT_EQ(goodput_plot(r).series.size(), 2U);
  // The serving metrics of both policies, for --metrics-out.
  EXPECT_NE(r.serving.exposition().render().find("policy=\"continuous\""), std::string::npos);
}

TEST(Scenarios, AnnotationSaysWhyADepthMissesItsSlo) {
  ServerSetup s = small_setup();
  MainOptions o;
  o.depths = {1, 4096};
  const std::string text = render(run_main(s, o));
  // An iteration at width 4096 is far beyond the 40 ms TPOT SLO.
  EXPECT_NE(text.find("<- TPOT SLO blown (iter time"), std::string::npos) << text;
}

TEST(Scenarios, ExtensionsRenderOneRowPerPolicy) {
  const ServerSetup s = small_setup();
  const InterferenceReport inter = run_interference(s, {});
  EXPECT_EQ(inter.rows.size(), 4U);
  const std::string it = render(inter);
  EXPECT_EQ(count(it, "disaggregated, KV over"), 2U) << it;
  EXPECT_EQ(to_json(inter)["rows"].size(), 4U);

  const PrefixReport px = run_prefix(s, {});
  EXPECT_EQ(px.rows.size(), 2U);
  EXPECT_NE(render(px).find("paged KV + automatic prefix cache"), std::string::npos);
  EXPECT_EQ(to_json(px)["pool_blocks"], 8192);

  const AdmissionReport ad = run_admission(s, 0.8);
  EXPECT_EQ(ad.rows.size(), 3U);
  EXPECT_NE(render(ad).find("cap batch width (iteration <= 80% of TPOT SLO)"), std::string::npos);
  EXPECT_EQ(to_json(ad)["rows"][2]["policy"], "cap width + shed requests past their TTFT SLO");
}

TEST(Scenarios, RefusedValuesNameTheirFlag) {
  MainOptions o;
  o.depths = {0};
  EXPECT_THROW(run_main(small_setup(), o), gpulab::UsageError);
  EXPECT_THROW(run_admission(small_setup(), 1.5), gpulab::UsageError);
  InterferenceOptions io;
  io.model = "gpt-9";
  EXPECT_THROW(run_interference(small_setup(), io), gpulab::UsageError);
}

}  // namespace
}  // namespace batching
