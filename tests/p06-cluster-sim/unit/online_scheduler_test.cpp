// The online scheduler on its own, without the simulator's clock: what one
// pass does with a queue (strict vs skip, preemption, the GPU cap, pools).
#include "cluster_sim/online_scheduler.hpp"

#include <gtest/gtest.h>

namespace {

using namespace cluster_sim;

Request req(int gpus, int priority = 0, std::size_t seq = 0, std::vector<int> pools = {}) {
  Request r;
  r.gpus = gpus;
  r.priority = priority;
  r.seq = seq;
  r.pools = std::move(pools);
  return r;
}

std::vector<JobId> started(const SchedulePass& p) {
  std::vector<JobId> out;
  for (const auto& e : p.events) {
    if (e.kind == SchedulerEvent::Kind::kStart) out.push_back(e.job);
  }
  return out;
}

TEST(OnlineScheduler, StrictOrderBlocksBehindTheHeadAndSkipDoesNot) {
  for (const Blocking b : {Blocking::kStrict, Blocking::kSkip}) {
    SchedulerConfig cfg;
    cfg.blocking = b;
    OnlineScheduler s({Cluster(1, 4)}, cfg);
    s.submit(1, req(3, 0, 1));
    s.submit(2, req(2, 0, 2));
    s.submit(3, req(1, 0, 3));
    const auto pass = s.schedule(0);
    if (b == Blocking::kStrict) {
      EXPECT_EQ(started(pass), (std::vector<JobId>{1}));  // 2 blocks, so 3 waits too
      EXPECT_TRUE(pass.pending.empty());
    } else {
      EXPECT_EQ(started(pass), (std::vector<JobId>{1, 3}));
      ASSERT_EQ(pass.pending.size(), 1U);
      EXPECT_EQ(pass.pending[0].first, 2U);
      EXPECT_EQ(pass.pending[0].second, Wait::kNoRoom);
    }
    EXPECT_EQ(s.pending_empty(), false);
  }
}

TEST(OnlineScheduler, PreemptionEvictsLowerPriorityAndRequeuesIt) {
  SchedulerConfig cfg;
  cfg.preempt = true;
  std::vector<std::pair<JobId, JobId>> hooked;
  SchedulerHooks hooks;
  hooks.on_preempt = [&](JobId v, JobId by) { hooked.emplace_back(v, by); };
  OnlineScheduler s({Cluster(1, 2)}, cfg, hooks);
  s.submit(1, req(2, 0, 1));
  EXPECT_EQ(started(s.schedule(0)), (std::vector<JobId>{1}));
  s.submit(2, req(1, 0, 2));  // equal priority: waits
  EXPECT_TRUE(started(s.schedule(1)).empty());
  s.submit(3, req(2, 5, 3));
  const auto pass = s.schedule(2);
  ASSERT_EQ(pass.events.size(), 2U);
  EXPECT_EQ(pass.events[0].kind, SchedulerEvent::Kind::kPreempt);
  EXPECT_EQ(pass.events[0].job, 1U);
  EXPECT_EQ(pass.events[0].by, 3U);
  EXPECT_EQ(pass.events[1].kind, SchedulerEvent::Kind::kStart);
  EXPECT_EQ(pass.events[1].job, 3U);
  EXPECT_EQ(hooked, (std::vector<std::pair<JobId, JobId>>{{1, 3}}));
  // The victim is queued again, ahead of job 2 (it keeps its seq), and runs when 3 ends.
  s.finish(3);
  EXPECT_EQ(started(s.schedule(3)), (std::vector<JobId>{1}));
}

TEST(OnlineScheduler, TheGpuCapHoldsJobsBackAndSaysSo) {
  SchedulerConfig cfg;
  cfg.blocking = Blocking::kSkip;
  cfg.gpu_cap = 3;
  OnlineScheduler s({Cluster(2, 4)}, cfg);
  s.submit(1, req(2, 0, 1));
  s.submit(2, req(2, 0, 2));
  s.submit(3, req(1, 0, 3));
  const auto pass = s.schedule(0);
  EXPECT_EQ(started(pass), (std::vector<JobId>{1, 3}));
  ASSERT_EQ(pass.pending.size(), 1U);
  EXPECT_EQ(pass.pending[0].second, Wait::kCapped);
  EXPECT_EQ(s.held_gpus(), 3);
}

TEST(OnlineScheduler, PoolsAreTriedInTheRequestsOrderAndBlockedGpusAreNotOffered) {
  SchedulerConfig cfg;
  cfg.blocking = Blocking::kSkip;
  OnlineScheduler s({Cluster(1, 2), Cluster(2, 1)}, cfg);
  s.block(0, Slice{0, 0b01, 0});  // an unhealthy device in pool 0
  s.submit(1, req(1, 0, 1, {0, 1}));
  s.submit(2, req(1, 0, 2, {0, 1}));
  s.submit(3, req(2, 0, 3, {1}));  // a gang across pool 1's two one-GPU nodes, once free
  const auto pass = s.schedule(0);
  ASSERT_EQ(pass.events.size(), 2U);
  EXPECT_EQ(pass.events[0].placement.pool, 0);
  EXPECT_EQ(pass.events[0].placement.placement[0].mask, 0b10U);
  EXPECT_EQ(pass.events[1].placement.pool, 1);
  s.finish(2);
  const auto next = s.schedule(1);
  ASSERT_EQ(started(next), (std::vector<JobId>{3}));
  EXPECT_EQ(next.events[0].placement.placement.size(), 2U);
}

TEST(OnlineScheduler, DrfPicksTheTenantWithTheSmallestDominantShare) {
  SchedulerConfig cfg;
  cfg.order = QueueOrder::kDrf;
  OnlineScheduler s({Cluster(1, 4)}, cfg);
  Request a = req(2, 0, 1);
  a.tenant = "a";
  s.adopt(1, a, PoolPlacement{0, {Slice{0, 0b11, 0}}}, 0);
  EXPECT_DOUBLE_EQ(s.dominant_share("a"), 0.5);
  Request a2 = req(2, 0, 2);
  a2.tenant = "a";
  Request b = req(2, 0, 3);
  b.tenant = "b";
  s.submit(2, a2);
  s.submit(3, b);
  EXPECT_EQ(s.contending_tenants(), 2);
  EXPECT_EQ(started(s.schedule(0)), (std::vector<JobId>{3}));
  s.withdraw(2);
  EXPECT_TRUE(s.pending_empty());
}

TEST(OnlineScheduler, OnAFullClusterASkipPassLeavesEveryJobQueuedInTheOrderTheHeadWouldOfferThem) {
  // Nothing can start (no free GPU, nothing lower-priority to evict): the pass
  // reports every job waiting, DRF order (smallest share first, then key), capped
  // ones as capped, and the next pass still has them all.
  SchedulerConfig cfg;
  cfg.order = QueueOrder::kDrf;
  cfg.blocking = Blocking::kSkip;
  cfg.gpu_cap = 5;
  OnlineScheduler s({Cluster(1, 4)}, cfg);
  const auto tenant_req = [](std::string tenant, int gpus, std::size_t seq) {
    Request r = req(gpus, 0, seq);
    r.tenant = std::move(tenant);
    return r;
  };
  s.adopt(100, tenant_req("a", 3, 0), PoolPlacement{0, {Slice{0, 0b0111, 0}}}, 0);
  s.adopt(101, tenant_req("b", 1, 0), PoolPlacement{0, {Slice{0, 0b1000, 0}}}, 0);
  s.submit(1, tenant_req("a", 1, 1));
  s.submit(2, tenant_req("b", 1, 2));
  s.submit(3, tenant_req("a", 2, 3));  // 4 held + 2 > the cap of 5
  s.submit(4, tenant_req("b", 1, 4));
  s.submit(5, tenant_req("c", 1, 5));
  const auto pass = s.schedule(0);
  EXPECT_TRUE(started(pass).empty());
  const std::vector<std::pair<JobId, Wait>> want{
      {5, Wait::kNoRoom}, {2, Wait::kNoRoom}, {4, Wait::kNoRoom}, {1, Wait::kNoRoom}, {3, Wait::kCapped}};
  EXPECT_EQ(pass.pending, want);
  EXPECT_EQ(s.contending_tenants(), 3);

  // b's running job ends: b (share 0, first key 2) and c (share 0, key 5) tie on
  // share, so the key decides and job 2 takes the one free GPU.
  s.finish(101);
  const auto next = s.schedule(0);
  EXPECT_EQ(started(next), (std::vector<JobId>{2}));
  const std::vector<std::pair<JobId, Wait>> rest{
      {5, Wait::kNoRoom}, {4, Wait::kNoRoom}, {1, Wait::kNoRoom}, {3, Wait::kCapped}};
  EXPECT_EQ(next.pending, rest);
}

// replace_pools(): the running jobs leave, the queue stays, and the next
// pass is the one a new scheduler given the same queue and pools would make —
// including when a pool's nodes became narrower (the need counts are redone).
TEST(OnlineScheduler, ReplacePoolsKeepsTheQueueAndForgetsWhatRan) {
  for (const int width : {4, 2}) {
    SCOPED_TRACE(width);
    SchedulerConfig cfg;
    cfg.blocking = Blocking::kSkip;
    cfg.order = QueueOrder::kDrf;
    OnlineScheduler kept({Cluster(2, 4)}, cfg);
    Request a = req(4, 0, 1);
    a.tenant = "a";
    Request b = req(2, 1, 2);
    b.tenant = "b";
    Request c = req(3, 0, 3);
    c.tenant = "a";
    kept.submit(1, a);
    kept.submit(2, b);
    kept.submit(3, c);
    EXPECT_EQ(started(kept.schedule(0)), (std::vector<JobId>{2, 1}));
    EXPECT_EQ(kept.queued_jobs(), (std::vector<JobId>{3}));
    EXPECT_FALSE(kept.queued(1));
    EXPECT_TRUE(kept.queued(3));

    // The next pass sees job 2 running elsewhere (adopted), 1 gone and one GPU blocked.
    std::vector<Cluster> pools{Cluster(2, width)};
    pools[0].take(Slice{1, 1, 0});
    std::vector<Cluster> same = pools;
    kept.replace_pools(std::move(pools));
    kept.set_gpu_cap(6);
    EXPECT_EQ(kept.held_gpus(), 0);
    EXPECT_FALSE(kept.queued(2));
    kept.adopt(20, b, PoolPlacement{0, {Slice{0, 0b11, 0}}}, 0);
    kept.submit(4, req(1, 0, 4));

    cfg.gpu_cap = 6;
    OnlineScheduler fresh(std::move(same), cfg);
    fresh.adopt(20, b, PoolPlacement{0, {Slice{0, 0b11, 0}}}, 0);
    fresh.submit(3, c);
    fresh.submit(4, req(1, 0, 4));
    EXPECT_EQ(kept.stranded(), fresh.stranded());
    EXPECT_EQ(kept.dominant_share("b"), fresh.dominant_share("b"));
    const auto k = kept.schedule(1);
    const auto f = fresh.schedule(1);
    EXPECT_EQ(started(k), started(f));
    EXPECT_EQ(k.pending, f.pending);
    EXPECT_EQ(kept.queued_jobs(), fresh.queued_jobs());
  }
}

}  // namespace

TEST(OnlineScheduler, APlacementHookChoosesWhereAndSeesTheJob) {
  // The policy alone keeps a job of <= G GPUs on one node, so 2 GPUs with one
  // free on each node would wait; a hook may spread it, and is asked per job.
  SchedulerConfig cfg;
  cfg.blocking = Blocking::kSkip;
  std::vector<JobId> asked;
  SchedulerHooks hooks;
  hooks.place = [&](JobId id, const Request& r, int, const Cluster& c) -> std::optional<Placement> {
    asked.push_back(id);
    Placement out;
    int left = r.gpus;
    for (int n = 0; n < c.nodes() && left > 0; ++n) {
      const std::uint64_t got = lowest_bits(c.free_mask(n), left);
      if (got != 0) out.push_back(Slice{n, got, 0});
      left -= popcount(got);
    }
    if (left > 0) return std::nullopt;
    return out;
  };
  OnlineScheduler s({Cluster(3, 2)}, cfg, hooks);
  s.block(0, Slice{0, 0b01, 0});
  s.block(0, Slice{1, 0b01, 0});
  s.block(0, Slice{2, 0b01, 0});
  s.submit(7, req(2, 0, 1));
  s.submit(8, req(2, 0, 2));  // one GPU is left after 7: the hook is asked and declines
  const auto pass = s.schedule(0);
  EXPECT_EQ(started(pass), (std::vector<JobId>{7}));
  ASSERT_EQ(pass.events.size(), 1U);
  EXPECT_EQ(pass.events[0].placement.placement.size(), 2U);  // one GPU on each node
  EXPECT_EQ(asked, (std::vector<JobId>{7, 8}));              // 8 asked, found no room
  ASSERT_EQ(pass.pending.size(), 1U);
  EXPECT_EQ(pass.pending[0].first, 8U);
}
