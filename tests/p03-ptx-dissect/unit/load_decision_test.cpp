#include "ptx_dissect/load_decision.hpp"

#include <gtest/gtest.h>

using ptx_dissect::decide_load;
using Action = ptx_dissect::LoadDecision::Action;

TEST(LoadDecision, TheCurriculumsThreeScenarios) {
  const auto m = ptx_dissect::curriculum_matrix();
  const auto a100 = decide_load(m, 80);
  EXPECT_EQ(a100.action, Action::kRunSass);
  EXPECT_EQ(a100.image_arch, 80);
  const auto h100 = decide_load(m, 90);
  EXPECT_EQ(h100.action, Action::kRunSass);
  EXPECT_EQ(h100.image_arch, 90);
  const auto next = decide_load(m, 100);  // "whatever ships next": no SASS, JIT the PTX
  EXPECT_EQ(next.action, Action::kJitPtx);
  EXPECT_EQ(next.image_arch, 90);
  EXPECT_NE(next.explanation.find("ComputeCache"), std::string::npos);
}

TEST(LoadDecision, SameMajorNewerMinorRunsTheOlderCubin) {
  const auto m = ptx_dissect::curriculum_matrix();
  for (int arch : {86, 87, 89}) {
    const auto d = decide_load(m, arch);
    EXPECT_EQ(d.action, Action::kRunSass) << arch;
    EXPECT_EQ(d.image_arch, 80) << arch;
  }
}

TEST(LoadDecision, SassNeverRunsAcrossMajorsOrOnOlderMinors) {
  EXPECT_EQ(decide_load({{86}, {}}, 80).action, Action::kFail);  // sm_86 SASS on sm_80
  EXPECT_EQ(decide_load({{80}, {}}, 90).action, Action::kFail);  // sm_80 SASS on sm_90, no PTX
}

TEST(LoadDecision, PtxNewerThanTheDeviceCannotBeJitted) {
  const auto t4 = decide_load(ptx_dissect::curriculum_matrix(), 75);
  EXPECT_EQ(t4.action, Action::kFail);
  EXPECT_NE(t4.explanation.find("no kernel image is available"), std::string::npos);
  EXPECT_EQ(decide_load({{}, {75}}, 75).action, Action::kJitPtx);
}

TEST(LoadDecision, PrefersTheNewestUsableImage) {
  EXPECT_EQ(decide_load({{80, 86}, {}}, 89).image_arch, 86);
  EXPECT_EQ(decide_load({{}, {70, 80, 90}}, 89).image_arch, 80);
  EXPECT_EQ(decide_load({{80}, {90}}, 86).action, Action::kRunSass);  // SASS beats JIT
}
