// The cold-start incident's three fixes, decided by the same load model as load-table.
#include <gtest/gtest.h>

#include "ptx_dissect/cold_start.hpp"

namespace {

ptx_dissect::ColdStartInputs curriculum_inputs() {
  ptx_dissect::ColdStartInputs in;
  in.shipped = ptx_dissect::curriculum_matrix();  // sm_80, sm_90 SASS + compute_90 PTX
  in.shipped_bytes = 1000;
  in.with_new_arches = {{80, 90, 100, 120}, {90}};
  in.with_new_arches_bytes = 2500;
  in.kernels = 5;
  return in;
}

}  // namespace

TEST(ColdStart, TheGpusThatJitTodayAreTheColumns) {
  const auto t = ptx_dissect::cold_start_table(curriculum_inputs());
  ASSERT_EQ(t.gpus.size(), 2U);
  EXPECT_EQ(t.gpus[0].arch, 100);
  EXPECT_EQ(t.gpus[1].arch, 120);
  ASSERT_EQ(t.rows.size(), 4U);
  EXPECT_EQ(t.rows[0].at_load[0], "JIT compute_90 PTX, 5 kernels at load");
}

TEST(ColdStart, EachFixChangesTheLoadItsOwnWay) {
  const auto t = ptx_dissect::cold_start_table(curriculum_inputs());
  EXPECT_EQ(t.rows[1].at_load, (std::vector<std::string>{"run sm_100 SASS", "run sm_120 SASS"}));
  EXPECT_EQ(t.rows[1].cost, "fatbin 1,000 -> 2,500 bytes (+150%), one ptxas run per new arch");
  EXPECT_EQ(t.rows[2].at_load[0], "reads the cache (compiled at image build)");
  EXPECT_EQ(t.rows[3].at_load[1], "JIT compute_90 PTX, 1 kernel per first launch");
}

TEST(ColdStart, AFixOneBuildThatMissesAnArchIsRefused) {
  auto in = curriculum_inputs();
  in.with_new_arches = {{80, 90, 100}, {90}};  // forgot sm_120
  EXPECT_THROW(ptx_dissect::cold_start_table(in), std::invalid_argument);
}

TEST(ColdStart, NoJitNoIncident) {
  auto in = curriculum_inputs();
  in.shipped = {{75, 80, 90, 100, 120}, {}};
  EXPECT_THROW(ptx_dissect::cold_start_table(in), std::invalid_argument);
}
