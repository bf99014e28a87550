// Runs the ring-allreduce program the way a user does and checks what they see.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <string>

#include "gpulab/json.hpp"
#include "gpulab_test/program_run.hpp"

namespace {

struct Result : gpulab_test::ProgramRun {
  double seconds = 0;  // wall time, to tell a hang from an answer
};

// ring-allreduce as a user runs it, stderr merged into what we read.
Result run(const std::string& args) {
  const auto start = std::chrono::steady_clock::now();
  Result r{gpulab_test::run_program("ring-allreduce", args, gpulab_test::Stderr::kMerged)};
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

TEST(RingAllreduceProgram, PrintsTheCurriculumBlockForWorld8) {
  const auto r = run("--world 8");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out,
            "ring all-reduce: world=8, vector=80000 doubles\n"
            "  correctness: PASS (every rank's result == sum 1..8 = 36)\n"
            "  bytes/rank moved : ring=1,120,000   naive_allgather=4,480,000\n"
            "  per-rank volume vs 2(N-1)/N*V bound: 1.00x  (1.00 = bandwidth-optimal)\n"
            "  ring moves 4.0x fewer bytes than naive all-gather\n");
}

TEST(RingAllreduceProgram, World4AndOtherSizesFollowTheFormula) {
  auto r = run("--world 4");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("sum 1..4 = 10"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ring=960,000   naive_allgather=1,920,000"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2.0x fewer"), std::string::npos) << r.out;

  // Not divisible by N, floats: the exact per-rank formula is checked inside the program.
  r = run("--world 7 --size 1003 --dtype f32 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto doc = gpulab::Json::parse(r.out);
  EXPECT_TRUE(doc["headline"]["correct"].get<bool>());
  EXPECT_TRUE(doc["headline"]["byte_count_failures"].empty());
  std::uint64_t total = 0;
  for (const auto& b : doc["headline"]["ring_bytes_per_rank"]) total += b.get<std::uint64_t>();
  EXPECT_EQ(total, 2u * 6 * 1003 * 4);
}

TEST(RingAllreduceProgram, TimingTableHasEveryAlgorithmAndNoWrongElements) {
  const auto r = run("--world 3 --size 5000 --iters 2 --warmup 1 --algo ring,naive,tree --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto doc = gpulab::Json::parse(r.out);
  const auto& rows = doc["timing"]["rows"];
  ASSERT_EQ(rows.size(), 3u);
  for (const auto& row : rows) {
    EXPECT_EQ(row["wrong"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(row["size_bytes"].get<std::uint64_t>(), 40'000u);
    EXPECT_GT(row["time_us"].get<double>(), 0.0);
    // busbw is algbw * 2(N-1)/N for every algorithm (nccl-tests' definition).
    EXPECT_DOUBLE_EQ(row["busbw_GBps"].get<double>(), row["algbw_GBps"].get<double>() * 4.0 / 3.0);
  }
}

TEST(RingAllreduceProgram, KilledRankIsNamedByEverySurvivorWithinTheTimeout) {
  for (const char* transport : {"auto", "shm", "tcp"}) {
    const auto r = run(std::string("--world 4 --kill-rank 2 --kill-step 3 --timeout-ms 400 --transport ") + transport);
    EXPECT_EQ(r.exit_code, 1) << transport << "\n" << r.out;
    EXPECT_NE(
        r.out.find("FAIL: rank 2 died mid-collective; 3 of 3 survivors detected it and named it, 0 finished first"),
        std::string::npos)
        << transport << "\n" << r.out;
    EXPECT_LT(r.seconds, 0.4 + 5.0) << "the program must not hang";
  }
}

// Both transports write exactly the formula's bytes; the timing table says which one carried them.
TEST(RingAllreduceProgram, BothTransportsMoveTheSameBytesAndSayWhichCarriedThem) {
  std::vector<gpulab::Json> counts;
  for (const char* transport : {"shm", "tcp"}) {
    const auto r = run(std::string("--world 5 --size 100003 --dtype f32 --iters 1 --warmup 0 --json --transport ") +
                       transport);
    ASSERT_EQ(r.exit_code, 0) << transport << "\n" << r.out;
    const auto doc = gpulab::Json::parse(r.out);
    EXPECT_TRUE(doc["headline"]["byte_count_failures"].empty()) << doc["headline"].dump(1);
    counts.push_back(doc["headline"]["ring_bytes_per_rank"]);
    EXPECT_EQ(doc["timing"]["rows"][0]["via"], transport);
    EXPECT_EQ(doc["timing"]["rows"][0]["wrong"].get<std::uint64_t>(), 0u);
    EXPECT_GT(doc["timing"]["rows"][0]["memcpy_GBps"].get<double>(), 0.0);
  }
  EXPECT_EQ(counts[0], counts[1]);
  // Forked ranks share one host, so auto picks shared memory.
  const auto r = run("--world 3 --size 1000 --iters 1 --warmup 0");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("3 ranks over shared memory"), std::string::npos) << r.out;
}

TEST(RingAllreduceProgram, WorldSweepShowsRingFlatAndNaiveGrowing) {
  const auto r = run("--world 2 --size 1001 --world-sweep --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto rows = gpulab::Json::parse(r.out)["world_sweep"]["rows"];
  ASSERT_EQ(rows.size(), 4u);
  const int worlds[] = {2, 4, 8, 16};
  for (std::size_t i = 0; i < 4; ++i) {
    const int n = worlds[i];
    EXPECT_EQ(rows[i]["world"].get<int>(), n);
    EXPECT_TRUE(rows[i]["exact"].get<bool>());
    EXPECT_LT(rows[i]["ring_over_v"].get<double>(), 2.0);
    EXPECT_NEAR(rows[i]["ring_over_v"].get<double>(), 2.0 * (n - 1) / n, 0.01);  // 1001 is not divisible by N
    EXPECT_DOUBLE_EQ(rows[i]["naive_over_v"].get<double>(), n - 1.0);
  }
}

TEST(RingAllreduceProgram, CrossoverTimesRingAndTreeAtEverySize) {
  const auto r = run("--world 4 --crossover --quick --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto doc = gpulab::Json::parse(r.out)["crossover"];
  const auto& rows = doc["timing"]["rows"];
  ASSERT_EQ(rows.size(), 8u);  // 4 sizes x (ring, tree)
  for (const auto& row : rows) EXPECT_EQ(row["wrong"].get<std::uint64_t>(), 0u);
  EXPECT_TRUE(doc.contains("found"));
}

TEST(RingAllreduceProgram, OverlapRunsEveryScheduleAndKeepsSumsExact) {
  const auto r = run("--world 3 --overlap --quick --size 30000 --buckets 4 --compute-ms 3 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto doc = gpulab::Json::parse(r.out)["overlap"];
  EXPECT_EQ(doc["wrong"].get<std::uint64_t>(), 0u);
  EXPECT_GE(doc["compute_ms"].get<double>(), 4 * 3.0);  // four sleeps of 3 ms cannot take less
  // Every schedule that includes the backward compute contains its four sleeps.
  EXPECT_GE(doc["sequential_ms"].get<double>(), 4 * 3.0);
  EXPECT_GE(doc["overlapped_ms"].get<double>(), 4 * 3.0);
}

// The injected factor (5x) is far above the detector's 2x ratio, so neither
// verdict depends on how loaded the machine is; only the detector's own
// ratio is asserted, never a wall-clock figure.
TEST(RingAllreduceProgram, StragglerCheckNamesExactlyTheSlowedRank) {
  const auto r = run("--world 4 --size 20000 --steps 10 --slow-rank 2 --slow-factor 5 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto doc = gpulab::Json::parse(r.out)["straggler"];
  EXPECT_EQ(doc["stragglers"], gpulab::Json::array({2})) << doc.dump(1);
  EXPECT_TRUE(doc["injected_rank_named"].get<bool>());
  EXPECT_EQ(doc["wrong"].get<std::uint64_t>(), 0u);
  ASSERT_EQ(doc["ranks"].size(), 4u);
  EXPECT_GE(doc["ranks"][2]["ratio"].get<double>(), 2.0);
  EXPECT_EQ(doc["ranks"][2]["compute_cpu_ms_per_step"].size(), 10u);
}

TEST(RingAllreduceProgram, StragglerCheckWithoutInjectionNamesNone) {
  const auto r = run("--world 4 --size 20000 --steps 10 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto doc = gpulab::Json::parse(r.out)["straggler"];
  EXPECT_TRUE(doc["stragglers"].empty()) << doc.dump(1);
  EXPECT_TRUE(doc["slow_rank"].is_null());
  EXPECT_FALSE(doc.contains("injected_rank_named"));
}

TEST(RingAllreduceProgram, StragglerTableNamesTheRankInWords) {
  const auto r = run("--world 3 --size 5000 --steps 6 --slow-rank 0 --slow-factor 8");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("rank 0 slowed 8.0x"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("straggler: rank 0 (score "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASS the detector named exactly the injected rank 0"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("straggler: rank 1"), std::string::npos) << r.out;
}

TEST(RingAllreduceProgram, BadArgumentsExit2WithOneLine) {
  for (const char* args : {"--world 1", "--world 0", "--size 0", "--algo butterfly", "--dtype f16", "--world x",
                           "--kill-rank 9 --kill-step 0 --world 4", "--kill-rank 1", "--kill-rank 1 --kill-step 6 --world 4",
                           "--timeout-ms -5", "--no-such-flag", "--overlap --buckets 0", "--sweep --sweep-min 0",
                           "--world 4 --slow-rank 4", "--slow-rank -1", "--world 4 --slow-rank 1 --slow-factor 1",
                           "--world 4 --slow-rank 1 --slow-factor 1e9", "--world 4 --slow-rank 1 --slow-factor nan",
                           "--world 4 --slow-factor 5", "--world 2 --steps 5", "--steps -1", "--steps 1e3",
                           "--world 4 --slow-rank 1 --kill-rank 2 --kill-step 0 --timeout-ms 100",
                           "--transport rdma", "--shm-spin-us -2", "--shm-spin-us 1e3", "--rounds 0",
                           "--rounds 101"}) {
    const auto r = run(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out;
    EXPECT_EQ(r.out.rfind("ring-allreduce: error: ", 0), 0u) << args << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << "\n" << r.out;
  }
}

}  // namespace

namespace {

TEST(RingAllreduceProgram, AnAbsurdWorldTimesSizeIsRefusedBeforeForking) {
  // Before: every flag was in range, so 64 ranks forked and each allocated its
  // 1 GiB vector plus the naive gather (64 GiB) until the OOM killer stepped in.
  const auto r = run("--world 64 --size 134217728");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  // The banner (stdout) and the refusal (stderr; the available figure is this machine's).
  EXPECT_NE(r.out.find("ring-allreduce: error: this run needs about 4.5 TB (64 ranks x 70.9 GB each), more "
                       "than the "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" this machine has available\n"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 2) << r.out;
}

TEST(RingAllreduceProgram, CompareMpiWithoutMpirunIsAUsageError) {
  const auto r = run("--compare-mpi");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("needs a run under mpirun"), std::string::npos) << r.out;
}

}  // namespace
