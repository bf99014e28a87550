// The checkpoint-cadence model against hand-computed values, and the property
// that makes Daly's interval worth printing: it wastes less than its neighbours.
#include <gtest/gtest.h>

#include "gpulab/errors.hpp"
#include "topology/checkpoint_cadence.hpp"

namespace {

TEST(CheckpointCadence, YoungAndDalyMatchHandComputedValues) {
  // delta = 60 s, M = 1 h: sqrt(2 * 60 * 3600) = 657.267 s; Daly's correction takes it to 617.876 s.
  EXPECT_NEAR(topo::young_interval(60, 3600), 657.2670690, 1e-6);
  EXPECT_NEAR(topo::daly_interval(60, 3600), 617.8756496, 1e-6);
  EXPECT_NEAR(topo::waste_fraction(617.8756496, 60, 300, 3600), 0.2378686, 1e-6);
}

TEST(CheckpointCadence, DalyWastesLessThanYoungAndThanAnyNearbyInterval) {
  for (const double mtbf : {600.0, 3600.0, 86400.0}) {
    const double tau = topo::daly_interval(60, mtbf);
    const double at_daly = topo::waste_fraction(tau, 60, 300, mtbf);
    EXPECT_LE(at_daly, topo::waste_fraction(topo::young_interval(60, mtbf), 60, 300, mtbf)) << mtbf;
    EXPECT_LT(at_daly, topo::waste_fraction(0.8 * tau, 60, 300, mtbf)) << mtbf;
    EXPECT_LT(at_daly, topo::waste_fraction(1.25 * tau, 60, 300, mtbf)) << mtbf;
  }
}

TEST(CheckpointCadence, ACheckpointLongerThanTwoMtbfsMeansCheckpointEveryMtbf) {
  EXPECT_EQ(topo::daly_interval(1000, 400), 400);
}

TEST(CheckpointCadence, BiggerJobsFailMoreOftenAndCheckpointMoreOften) {
  const auto r = topo::checkpoint_cadence({});
  ASSERT_EQ(r.rows.size(), 5u);
  EXPECT_DOUBLE_EQ(r.rows[0].job_mtbf_s, 50'000.0 * 3600 / 8);
  for (std::size_t i = 1; i < r.rows.size(); ++i) {
    EXPECT_LT(r.rows[i].job_mtbf_s, r.rows[i - 1].job_mtbf_s);
    EXPECT_LT(r.rows[i].daly_s, r.rows[i - 1].daly_s);
    EXPECT_GT(r.rows[i].waste, r.rows[i - 1].waste);
  }
}

TEST(CheckpointCadence, NonPositiveInputsNameTheirFlag) {
  topo::CadenceInputs in;
  in.checkpoint_s = 0;
  EXPECT_THROW(topo::checkpoint_cadence(in), gpulab::UsageError);
  in = {};
  in.gpu_mtbf_h = -1;
  try {
    topo::checkpoint_cadence(in);
    FAIL();
  } catch (const gpulab::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--gpu-mtbf-h"), std::string::npos);
  }
}

}  // namespace
