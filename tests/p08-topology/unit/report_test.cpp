// topo-sim's report without the program: the text is the README's, the JSON
// carries the same numbers, extensions appear only when asked for.
#include "topology/report.hpp"

#include <gtest/gtest.h>

#include <string>

#include "gpulab/errors.hpp"

namespace {

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

TEST(Report, CurriculumTables) {
  const topo::TopoReport r = topo::build_report(topo::curriculum_cluster(), {});
  ASSERT_EQ(r.tp_rows.size(), 3U);
  EXPECT_TRUE(r.tp_rows[1].catastrophic);
  EXPECT_FALSE(r.tp_rows[2].catastrophic);  // only the first row past 10x is marked
  const std::string text = render(r);
  EXPECT_TRUE(has(text,
                  "TP split across 2 nodes     InfiniBand             753.9     17.1x  <- "
                  "catastrophic\n"))
      << text;
  EXPECT_TRUE(has(text, "flat ring over all 32 GPUs (IB)          : 10.5 ms\n")) << text;
  EXPECT_TRUE(has(text, "stalls 32 GPUs (spans all nodes)\n")) << text;
  EXPECT_FALSE(has(text, "pipeline bubble")) << text;
  const gpulab::Json j = to_json(r);
  EXPECT_EQ(j["blast_radius"]["tp_within_node"], 8);
  EXPECT_NEAR(j["hierarchical"]["speedup"].get<double>(), 6.71, 0.005);
  EXPECT_FALSE(j.contains("search_3d"));
}

TEST(Report, AllAddsEveryExtensionInOrder) {
  topo::ReportOptions o;
  o.all = true;
  const topo::TopoReport r = topo::build_report(topo::curriculum_cluster(), o);
  ASSERT_TRUE(r.bubble && r.search_3d && r.gpudirect && r.blast_search);
  const std::string text = render(r);
  const auto bubble = text.find("== pipeline bubble: 4 stages ==");
  const auto search = text.find("== 3D-parallel placement search: 32 GPUs");
  const auto gd = text.find("== GPUDirect RDMA off");
  const auto blast = text.find("== failure-domain search");
  ASSERT_NE(blast, std::string::npos) << text;
  EXPECT_LT(bubble, search);
  EXPECT_LT(search, gd);
  EXPECT_LT(gd, blast);
  EXPECT_TRUE(has(text, "the curriculum's layout (TP 8 in node, PP 4 across nodes) ranks #"));
  const gpulab::Json j = to_json(r);
  EXPECT_EQ(j["pipeline_bubble"].size(), 7U);
  EXPECT_EQ(j["search_3d"]["layouts_searched"], r.search_3d->size());
  EXPECT_EQ(j["gpudirect"]["paths"].size(), 5U);
  EXPECT_EQ(j["blast_search"]["best"], r.blast_search->best);
}

TEST(Report, RefusesWhatTheClusterCannotHold) {
  topo::ReportOptions o;
  o.tp = 3;
  EXPECT_THROW(topo::build_report(topo::curriculum_cluster(), o), gpulab::UsageError);
  o = {};
  o.layers = 0;
  EXPECT_THROW(topo::validate(o), gpulab::UsageError);
  EXPECT_THROW(topo::run_calibration(1, true), gpulab::UsageError);
}

TEST(Report, CalibrationRendersItsFit) {
  topo::CalibrationReport r;
  r.world = 4;
  r.samples = {{4096, 1e-4}, {65536, 4e-4}};
  r.fitted = {"loopback", 2e9, 10e-6};
  const std::string text = render(r);
  EXPECT_TRUE(has(text, "== calibration: ring all-reduce, 4 processes over 127.0.0.1 TCP"));
  EXPECT_TRUE(
      has(text, "fitted link \"loopback\": bandwidth 2.00 GB/s, latency 10.0 us per hop\n"));
  const gpulab::Json j = to_json(r);
  EXPECT_EQ(j["calibration"]["points"].size(), 2U);
  EXPECT_DOUBLE_EQ(j["calibration"]["bandwidth_GBps"].get<double>(), 2.0);
}

}  // namespace
