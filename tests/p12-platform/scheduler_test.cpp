#include "platform/scheduler.hpp"

#include <gtest/gtest.h>

namespace {

using namespace platform;

Node node(const std::string& name, std::vector<std::pair<std::string, int>> backends) {
  Node n;
  n.name = name;
  for (const auto& [b, k] : backends) {
    for (int i = 0; i < k; ++i) n.devices.push_back(Device{b + ":" + std::to_string(i), b, i, true, "", {"f32"}});
  }
  return n;
}

Job job(const std::string& id, int gpus, const std::string& backend, int priority = 0) {
  Job j;
  j.id = id;
  j.spec.name = id;
  j.spec.kind = JobKind::kTrain;
  j.spec.gpus = gpus;
  j.spec.backend = backend;
  j.spec.priority = priority;
  return j;
}

TEST(Scheduler, BestFitKeepsAGangOnOneNodeWhenItFits) {
  const std::vector<Node> nodes{node("a", {{"cpu_ref", 4}}), node("b", {{"cpu_ref", 2}})};
  const auto j = job("j1", 2, "cpu_ref");
  const auto d = schedule(SchedulerInput{&nodes, {}, -1}, {&j});
  ASSERT_TRUE(d[0].placement);
  ASSERT_EQ(d[0].placement->size(), 2U);
  // Best fit: the node left with the fewest free devices is b (2 - 2 = 0).
  EXPECT_EQ((*d[0].placement)[0].node, "b");
  EXPECT_EQ((*d[0].placement)[1].node, "b");
  EXPECT_EQ((*d[0].placement)[1].rank, 1);
}

TEST(Scheduler, AGangLargerThanTheClusterIsNeverPartiallyPlaced) {
  const std::vector<Node> nodes{node("a", {{"cpu_ref", 2}}), node("b", {{"cpu_ref", 1}})};
  const auto j = job("big", 4, "cpu_ref");
  const auto d = schedule(SchedulerInput{&nodes, {}, -1}, {&j});
  EXPECT_FALSE(d[0].placement);
  EXPECT_EQ(d[0].reason, "needs 4 devices of cpu_ref; the cluster has 3 schedulable");
}

TEST(Scheduler, AGangSpansNodesWholeNodesFirst) {
  const std::vector<Node> nodes{node("a", {{"cpu_ref", 2}}), node("b", {{"cpu_ref", 2}})};
  const auto j = job("g", 3, "cpu_ref");
  const auto d = schedule(SchedulerInput{&nodes, {}, -1}, {&j});
  ASSERT_TRUE(d[0].placement);
  EXPECT_EQ(d[0].placement->size(), 3U);
}

TEST(Scheduler, UnhealthyUncertifiedAllocatedAndLostDevicesAreNotOffered) {
  std::vector<Node> nodes{node("a", {{"fast", 4}})};
  nodes[0].devices[0].healthy = false;      // Xid 79
  nodes[0].devices[1].dtypes.clear();       // conformance did not certify it
  const auto j = job("j", 2, "fast");
  SchedulerInput in{&nodes, {"a/fast:2"}, -1};  // held by a running task
  auto d = schedule(in, {&j});
  EXPECT_FALSE(d[0].placement);
  const auto one = job("one", 1, "fast");
  d = schedule(in, {&one});
  ASSERT_TRUE(d[0].placement);
  EXPECT_EQ((*d[0].placement)[0].device, "fast:3");
  nodes[0].state = NodeState::kLost;
  d = schedule(in, {&one});
  EXPECT_FALSE(d[0].placement);
}

TEST(Scheduler, AutoPrefersTheFastestBackendThatFits) {
  const std::vector<Node> nodes{node("a", {{"cpu_ref", 2}, {"blas", 1}})};
  const auto j = job("j", 1, "auto");
  const auto d = schedule(SchedulerInput{&nodes, {}, -1}, {&j});
  ASSERT_TRUE(d[0].placement);
  EXPECT_EQ((*d[0].placement)[0].backend, "blas");
  const auto two = job("two", 2, "auto");
  const auto d2 = schedule(SchedulerInput{&nodes, {}, -1}, {&two});
  ASSERT_TRUE(d2[0].placement);
  EXPECT_EQ((*d2[0].placement)[0].backend, "cpu_ref");
}

TEST(Scheduler, EarlierJobsGetDevicesFirstAndTheLicenceCapsTheTotal) {
  const std::vector<Node> nodes{node("a", {{"cpu_ref", 4}})};
  const auto j1 = job("j1", 3, "cpu_ref");
  const auto j2 = job("j2", 2, "cpu_ref");
  const auto j3 = job("j3", 1, "cpu_ref");
  auto d = schedule(SchedulerInput{&nodes, {}, -1}, {&j1, &j2, &j3});
  EXPECT_TRUE(d[0].placement);
  EXPECT_FALSE(d[1].placement);  // only one left
  EXPECT_TRUE(d[2].placement);   // a later job that fits is not blocked
  d = schedule(SchedulerInput{&nodes, {}, 2}, {&j1, &j3});
  EXPECT_FALSE(d[0].placement);
  EXPECT_EQ(d[0].reason, "licence allows 2 devices in use; 0 in use, job needs 3");
  EXPECT_TRUE(d[1].placement);
}

}  // namespace
