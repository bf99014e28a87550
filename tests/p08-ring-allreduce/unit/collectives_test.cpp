// Runs the collectives on real forked ranks, over shared memory and over
// loopback TCP, and checks every element of every rank against the exact sum
// and every rank's byte count against the exact formula on both transports.
#include "ring_allreduce/collectives.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "ring_allreduce/chunks.hpp"
#include "ring_allreduce/experiments.hpp"
#include "ring_allreduce/launcher.hpp"

namespace {

using ring::Algo;
using ring::RankOutcome;

// Rank r holds r*1000 + i + 1 at position i: distinct everywhere, exact in a
// double and (for these sizes) a float, so a misplaced chunk changes the sum.
template <class T>
ring::RankJob exact_sum_job(Algo algo, std::size_t n) {
  return [algo, n](ring::Transport& t) {
    std::vector<T> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(t.rank() * 1000 + static_cast<int>(i % 997) + 1);
    t.reset_counters();
    ring::allreduce<T>(algo, t, v);
    const int w = t.world();
    std::uint64_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double expected = 1000.0 * w * (w - 1) / 2 + w * (static_cast<double>(i % 997) + 1);
      if (static_cast<double>(v[i]) != expected) ++wrong;
    }
    return gpulab::Json{
        {"wrong", wrong}, {"sent", t.bytes_sent()}, {"received", t.bytes_received()}, {"via", t.paths_name()}};
  };
}

// Every test runs on both data paths; "auto" on forked ranks (one host) must mean shared memory.
class Collectives : public ::testing::TestWithParam<ring::TransportKind> {
 protected:
  std::vector<RankOutcome> run(int world, const ring::RankJob& job) const {
    ring::LaunchOptions opts;
    opts.world = world;
    opts.timeout = std::chrono::milliseconds(20'000);  // a bug must fail, not hang the suite
    opts.transport.kind = GetParam();
    auto ranks = ring::launch_local(opts, job);
    const std::string expected = GetParam() == ring::TransportKind::kTcp ? "tcp" : "shm";
    for (const auto& r : ranks) {
      if (r.status == RankOutcome::Status::kOk && r.report.contains("via")) {
        EXPECT_EQ(r.report["via"], expected) << "rank " << r.rank;
      }
    }
    return ranks;
  }
};

INSTANTIATE_TEST_SUITE_P(Transports, Collectives,
                         ::testing::Values(ring::TransportKind::kShm, ring::TransportKind::kTcp,
                                           ring::TransportKind::kAuto),
                         [](const auto& param_info) { return std::string(ring::transport_kind_name(param_info.param)); });

TEST_P(Collectives, RingExactSumsAndExactByteCountsForManyWorldsAndLengths) {
  for (int world : {2, 3, 4, 5, 8}) {
    for (std::size_t n : {1u, 3u, 7u, 64u, 1001u, 40'003u, 300'001u}) {
      const auto ranks = run(world, exact_sum_job<double>(Algo::kRing, n));
      for (const auto& r : ranks) {
        ASSERT_EQ(r.status, RankOutcome::Status::kOk) << r.error;
        EXPECT_EQ(r.report["wrong"].get<std::uint64_t>(), 0u) << "world " << world << " n " << n << " rank " << r.rank;
        EXPECT_EQ(r.report["sent"].get<std::uint64_t>(), ring::ring_bytes_sent(n, world, r.rank, 8))
            << "world " << world << " n " << n << " rank " << r.rank;
        // What a rank writes, its right neighbour reads: the bound holds on the receiving side too.
        EXPECT_EQ(r.report["received"].get<std::uint64_t>(),
                  ring::ring_bytes_sent(n, world, ring::mod(r.rank - 1, world), 8))
            << "world " << world << " n " << n << " rank " << r.rank;
      }
    }
  }
}

TEST_P(Collectives, RingFloatsToo) {
  const auto ranks = run(6, exact_sum_job<float>(Algo::kRing, 12'345));
  for (const auto& r : ranks) {
    ASSERT_EQ(r.status, RankOutcome::Status::kOk) << r.error;
    EXPECT_EQ(r.report["wrong"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(r.report["sent"].get<std::uint64_t>(), ring::ring_bytes_sent(12'345, 6, r.rank, 4));
  }
}

// Rings far smaller than a chunk (64 bytes: eight doubles; 4 KiB), sliced to
// half a ring as usual and unsliced (every message many rings long, so only
// the relay's rules keep it moving), on worlds 2..5 and lengths that divide
// neither by the world nor by the slice: exact sums, exact byte counts, and
// no deadlock (the watchdog would fail the run).
TEST(FusedRing, RingsSmallerThanAChunkNeverDeadlock) {
  struct Case {
    std::size_t ring_bytes;
    std::size_t n;
  };
  for (bool unsliced : {false, true}) {
    for (const Case c : {Case{64, 7}, Case{64, 1'001}, Case{4096, 1'001}, Case{4096, 40'003}}) {
      for (int world : {2, 3, 4, 5}) {
        ring::LaunchOptions opts;
        opts.world = world;
        opts.timeout = std::chrono::milliseconds(20'000);
        opts.transport.kind = ring::TransportKind::kShm;
        opts.transport.ring_bytes = c.ring_bytes;
        opts.transport.unsliced = unsliced;
        const auto ranks = ring::launch_local(opts, exact_sum_job<double>(Algo::kRing, c.n));
        for (const auto& r : ranks) {
          const std::string where = "ring " + std::to_string(c.ring_bytes) + " unsliced " + std::to_string(unsliced) +
                                    " world " + std::to_string(world) + " n " + std::to_string(c.n) + " rank " +
                                    std::to_string(r.rank);
          ASSERT_EQ(r.status, RankOutcome::Status::kOk) << where << ": " << r.error;
          EXPECT_EQ(r.report["via"], "shm") << where;
          EXPECT_EQ(r.report["wrong"].get<std::uint64_t>(), 0u) << where;
          EXPECT_EQ(r.report["sent"].get<std::uint64_t>(), ring::ring_bytes_sent(c.n, world, r.rank, 8)) << where;
          EXPECT_EQ(r.report["received"].get<std::uint64_t>(),
                    ring::ring_bytes_sent(c.n, world, ring::mod(r.rank - 1, world), 8))
              << where;
        }
      }
    }
  }
  // Floats of odd count: the last message of a stream ends off an 8-byte boundary.
  ring::LaunchOptions opts;
  opts.world = 3;
  opts.timeout = std::chrono::milliseconds(20'000);
  opts.transport.kind = ring::TransportKind::kShm;
  opts.transport.ring_bytes = 64;
  for (const auto& r : ring::launch_local(opts, exact_sum_job<float>(Algo::kRing, 1'001))) {
    ASSERT_EQ(r.status, RankOutcome::Status::kOk) << r.error;
    EXPECT_EQ(r.report["wrong"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(r.report["sent"].get<std::uint64_t>(), ring::ring_bytes_sent(1'001, 3, r.rank, 4));
  }
}

// The one-pass path is really taken over shared memory, never over TCP, and
// never for a step-0 message (nothing arrived that it could be made of).
TEST_P(Collectives, FusedRingForwardsInOnePassOverSharedMemoryOnly) {
  constexpr int kWorld = 3;
  constexpr std::size_t kN = 300'001;
  const auto ranks = run(kWorld, [](ring::Transport& t) {
    std::vector<double> v(kN, static_cast<double>(t.rank() + 1));
    t.reset_counters();
    ring::ring_allreduce<double>(t, v);
    std::uint64_t wrong = 0;
    for (double x : v) wrong += x != 6.0;
    return gpulab::Json{{"wrong", wrong}, {"sent", t.bytes_sent()}, {"forwarded", t.bytes_forwarded()},
                        {"via", t.paths_name()}};
  });
  for (const auto& r : ranks) {
    ASSERT_EQ(r.status, RankOutcome::Status::kOk) << r.error;
    EXPECT_EQ(r.report["wrong"].get<std::uint64_t>(), 0u);
    const auto sent = r.report["sent"].get<std::uint64_t>();
    const auto forwarded = r.report["forwarded"].get<std::uint64_t>();
    EXPECT_EQ(sent, ring::ring_bytes_sent(kN, kWorld, r.rank, 8));
    if (GetParam() == ring::TransportKind::kTcp) {
      EXPECT_EQ(forwarded, 0u) << "rank " << r.rank;
    } else {
      EXPECT_GT(forwarded, 0u) << "rank " << r.rank;
      const auto step0 = ring::chunk_bounds(kN, kWorld, ring::rs_send_chunk(r.rank, 0, kWorld)).size() * 8;
      EXPECT_LE(forwarded, sent - step0) << "rank " << r.rank;
    }
  }
}

TEST_P(Collectives, NaiveExactSumsAndNMinusOneVectorsPerRank) {
  for (int world : {2, 3, 5}) {
    const auto ranks = run(world, exact_sum_job<double>(Algo::kNaive, 999));
    for (const auto& r : ranks) {
      ASSERT_EQ(r.status, RankOutcome::Status::kOk) << r.error;
      EXPECT_EQ(r.report["wrong"].get<std::uint64_t>(), 0u);
      EXPECT_EQ(r.report["sent"].get<std::uint64_t>(), ring::naive_bytes_sent(999, world, 8));
    }
  }
}

TEST_P(Collectives, TreeExactSumsForTreesOfEveryShape) {
  for (int world : {2, 3, 4, 6, 7, 9}) {
    const auto ranks = run(world, exact_sum_job<double>(Algo::kTree, 1'001));
    std::uint64_t sent = 0;
    for (const auto& r : ranks) {
      ASSERT_EQ(r.status, RankOutcome::Status::kOk) << r.error;
      EXPECT_EQ(r.report["wrong"].get<std::uint64_t>(), 0u) << "world " << world;
      sent += r.report["sent"].get<std::uint64_t>();
    }
    // Every non-root rank sends V up and receives V down: 2(N-1)V in total.
    EXPECT_EQ(sent, 2u * (world - 1) * 1'001 * 8);
  }
}

// One connection carries messages of 1, 4·odd and 8 bytes in turn (barrier
// tokens, float chunks of odd length, doubles): the shared rings pad each
// message to 8 bytes, so no element ever straddles the wrap or a later message.
TEST_P(Collectives, MessagesOfEveryLengthShareOneStream) {
  const auto ranks = run(3, [](ring::Transport& t) {
    std::uint64_t wrong = 0;
    for (int rep = 0; rep < 40; ++rep) {
      ring::barrier(t);
      std::vector<float> f(1'001 + static_cast<std::size_t>(rep) * 7, static_cast<float>(t.rank() + 1));
      ring::ring_allreduce<float>(t, f);
      for (float x : f) wrong += x != 6.0f;
      std::vector<double> d(70'001, static_cast<double>(t.rank()));
      ring::allreduce<double>(rep % 2 ? Algo::kTree : Algo::kNaive, t, d);
      for (double x : d) wrong += x != 3.0;
    }
    return gpulab::Json{{"wrong", wrong}, {"via", t.paths_name()}};
  });
  for (const auto& r : ranks) {
    ASSERT_EQ(r.status, RankOutcome::Status::kOk) << r.error;
    EXPECT_EQ(r.report["wrong"].get<std::uint64_t>(), 0u) << "rank " << r.rank;
  }
}

// The shared rings between two threads of one process, so ThreadSanitizer
// sees both ends of every ring (between forked ranks it sees only one): a
// publish without release/acquire, or a reader running ahead of the writer,
// is a reported race here, and a wrong byte a wrong sum.
TEST(SharedRings, TwoThreadsSeeEveryByteTheOtherPublished) {
  const auto deadline = ring::Clock::now() + std::chrono::seconds(30);
  ring::Listener l = ring::listen_tcp("127.0.0.1", 1);
  std::vector<ring::Fd> p0(2), p1(2);
  p1[0] = ring::connect_tcp(l.address, l.port, deadline);
  p0[1] = ring::accept_tcp(l.fd, deadline);
  ring::Transport t0(0, 2, std::move(p0), std::chrono::milliseconds(30'000));
  ring::Transport t1(1, 2, std::move(p1), std::chrono::milliseconds(30'000));
  ring::TransportOptions opts;
  opts.kind = ring::TransportKind::kShm;
  std::thread setup([&] { t1.setup_paths(opts, deadline); });
  t0.setup_paths(opts, deadline);
  setup.join();
  ASSERT_EQ(t0.paths_name(), "shm");
  EXPECT_EQ(t0.ranks_on_shm(), 2);
  // 300,001 doubles: each half crosses the 1 MiB ring's wrap point.
  for (std::size_t n : {1u, 1001u, 300'001u}) {
    std::vector<double> a(n), b(n);
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = static_cast<double>(i % 1000);
      b[i] = 1000.0 * static_cast<double>(i % 7);
    }
    t0.reset_counters();
    std::thread peer([&] { ring::ring_allreduce<double>(t1, b); });
    ring::ring_allreduce<double>(t0, a);
    peer.join();
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double expected = static_cast<double>(i % 1000) + 1000.0 * static_cast<double>(i % 7);
      wrong += (a[i] != expected) + (b[i] != expected);
    }
    EXPECT_EQ(wrong, 0u) << n;
    EXPECT_EQ(t0.bytes_sent(), ring::ring_bytes_sent(n, 2, 0, 8)) << n;
  }
}

TEST(Transport, KindNames) {
  EXPECT_EQ(ring::parse_transport_kind("shm"), ring::TransportKind::kShm);
  EXPECT_EQ(ring::transport_kind_name(ring::parse_transport_kind("auto")), "auto");
  EXPECT_THROW(ring::parse_transport_kind("rdma"), std::invalid_argument);
}

TEST(Crossover, FindsWhereTheRingStartsToWinForGood) {
  std::vector<ring::TimingRow> rows;
  const auto add = [&](std::size_t bytes, double ring_s, double tree_s) {
    ring::TimingRow r;
    r.bytes = bytes;
    r.count = bytes / 8;
    r.algo = Algo::kRing;
    r.seconds = ring_s;
    rows.push_back(r);
    r.algo = Algo::kTree;
    r.seconds = tree_s;
    rows.push_back(r);
  };
  add(1'000, 3e-4, 1e-4);
  add(10'000, 4e-4, 2e-4);
  add(100'000, 1e-3, 2e-3);
  add(1'000'000, 5e-3, 2e-2);
  auto c = ring::find_crossover(rows);
  EXPECT_TRUE(c.found);
  EXPECT_EQ(c.tree_wins_up_to, 10'000u);
  EXPECT_EQ(c.ring_wins_from, 100'000u);
  rows.clear();
  add(1'000, 1e-4, 2e-4);
  c = ring::find_crossover(rows);
  EXPECT_FALSE(c.found);
  EXPECT_EQ(c.tree_wins_up_to, 0u);
}

TEST(Algo, ParseKnowsTheThreeNames) {
  EXPECT_EQ(ring::parse_algo("tree"), Algo::kTree);
  EXPECT_EQ(ring::algo_name(ring::parse_algo("naive")), "naive");
  EXPECT_THROW(ring::parse_algo("butterfly"), std::invalid_argument);
}

}  // namespace
