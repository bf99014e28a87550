#include "platform/serve_health.hpp"

#include <gtest/gtest.h>

namespace {

using platform::ServeHealth;
using platform::ServeHealthPolicy;
using V = ServeHealth::Verdict;

ServeHealthPolicy policy() {
  ServeHealthPolicy p;
  p.start_timeout_s = 10;
  p.interval_s = 0.5;
  p.failures_to_fail = 3;
  return p;
}

TEST(ServeHealth, StartingUntilTheFirstAnswerThenHealthy) {
  ServeHealth h(policy(), 100);
  EXPECT_TRUE(h.due(100));
  EXPECT_EQ(h.observe(false, "connection refused", 100), V::kStarting);  // loading its weights
  EXPECT_FALSE(h.due(100.2));
  EXPECT_TRUE(h.due(100.5));
  EXPECT_EQ(h.observe(false, "connection refused", 109), V::kStarting);
  EXPECT_EQ(h.observe(true, "", 109.5), V::kHealthy);
}

TEST(ServeHealth, AServerThatNeverAnswersFailsAtTheStartTimeout) {
  ServeHealth h(policy(), 100);
  EXPECT_EQ(h.observe(false, "connection refused", 109.9), V::kStarting);
  EXPECT_EQ(h.observe(false, "connection refused", 110), V::kFailed);
  EXPECT_EQ(h.reason(),
            "the server did not answer GET /health within 10 s of its start: connection refused");
  EXPECT_FALSE(h.due(200));
  EXPECT_EQ(h.observe(true, "", 200), V::kFailed);  // final
}

TEST(ServeHealth, AHealthyServerFailsOnlyAfterMissesInARow) {
  ServeHealth h(policy(), 0);
  h.observe(true, "", 1);
  EXPECT_EQ(h.observe(false, "read timeout", 2), V::kHealthy);
  EXPECT_EQ(h.observe(false, "read timeout", 3), V::kHealthy);
  EXPECT_EQ(h.observe(true, "", 4), V::kHealthy);  // a success resets the count
  EXPECT_EQ(h.observe(false, "read timeout", 5), V::kHealthy);
  EXPECT_EQ(h.observe(false, "read timeout", 6), V::kHealthy);
  EXPECT_EQ(h.observe(false, "answered 500", 7), V::kFailed);
  EXPECT_EQ(h.reason(),
            "the server stopped answering GET /health (3 probes in a row failed): answered 500");
}

}  // namespace
