// A 4-rank run under Open MPI's mpirun (oversubscribed: CI has 2 cores).
// Skipped when this build has no MPI.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "gpulab/json.hpp"
#include "gpulab_test/program_run.hpp"
#include "ring_allreduce/mpi_launch.hpp"

namespace {

std::string mpirun_command(const std::string& args) {
  const char* mpiexec = std::getenv("RING_MPIEXEC");
  // CI runs as root; Open MPI refuses that unless told it is intended. Under
  // the asan preset, LeakSanitizer reports Open MPI's own allocations (libmpi
  // and its dlopen'ed components free nothing at MPI_Finalize), so leak
  // checking is off for these runs only; the forked-rank tests cover our code. The
  // timeout stops a hung mpirun short of ctest's 600 s (a straggler run took over 120 s
  // under ThreadSanitizer on the loaded 2-core machine).
  return std::string("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS=\"$ASAN_OPTIONS:detect_leaks=0\" timeout 540 ") + mpiexec +
         " --oversubscribe -np 4 " + GPULAB_BIN_DIR + "/ring-allreduce " + args + " 2>&1";
}

// mpirun's output with the ranks' stderr folded in (the command line merges it already).
std::pair<int, std::string> run(const std::string& cmd) {
  const auto r = gpulab_test::run_command(cmd, gpulab_test::Stderr::kMerged);
  return {r.exit_code, r.out};
}

class UnderMpirun : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ring::mpi_built() || std::getenv("RING_MPIEXEC") == nullptr)
      GTEST_SKIP() << "built without MPI (find_package(MPI) found none): install libopenmpi-dev openmpi-bin";
  }
};

TEST_F(UnderMpirun, RankAndWorldComeFromMpiAndTheRingIsExact) {
  const auto [rc, out] = run(mpirun_command("--size 10003"));
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("ring all-reduce: world=4, vector=10003 doubles"), std::string::npos) << out;
  EXPECT_NE(out.find("launched by mpirun"), std::string::npos) << out;
  EXPECT_NE(out.find("correctness: PASS (every rank's result == sum 1..4 = 10)"), std::string::npos) << out;
  // Only rank 0 prints.
  EXPECT_EQ(out.find("ring all-reduce:", out.find("ring all-reduce:") + 1), std::string::npos) << out;
}

TEST_F(UnderMpirun, CompareMpiTimesMpiAllreduceOnTheSameBuffers) {
  const auto [rc, out] = run(mpirun_command("--size 20000 --iters 2 --warmup 1 --compare-mpi --json"));
  ASSERT_EQ(rc, 0) << out;
  const auto doc = gpulab::Json::parse(out);
  const auto& rows = doc["timing"]["rows"];
  // mpirun's ranks share this host: the ring is timed over shared memory and over TCP.
  ASSERT_EQ(rows.size(), 3u) << rows.dump(1);
  EXPECT_EQ(rows[0]["algo"], "ring");
  EXPECT_EQ(rows[0]["via"], "shm");
  EXPECT_EQ(rows[1]["algo"], "ring");
  EXPECT_EQ(rows[1]["via"], "tcp");
  EXPECT_EQ(rows[2]["algo"], "mpi");
  for (const auto& row : rows) {
    EXPECT_EQ(row["wrong"].get<std::uint64_t>(), 0u);
    EXPECT_GT(row["busbw_GBps"].get<double>(), 0.0);
    EXPECT_GT(row["memcpy_GBps"].get<double>(), 0.0);
  }
  EXPECT_EQ(doc["headline"]["ring_bytes_per_rank"].size(), 4u);
}

// Under mpirun the ranks find each other's host identity through the TCP
// mesh, as forked ranks do; --transport shm then carries the byte-count run.
TEST_F(UnderMpirun, ShmByteCountsMatchTheFormula) {
  const auto [rc, out] = run(mpirun_command("--size 10003 --transport shm --json"));
  ASSERT_EQ(rc, 0) << out;
  const auto doc = gpulab::Json::parse(out)["headline"];
  EXPECT_TRUE(doc["correct"].get<bool>());
  EXPECT_TRUE(doc["byte_count_failures"].empty()) << doc.dump(1);
}

TEST_F(UnderMpirun, StragglerCheckGathersEveryRanksStepsAndNamesTheSlowOne) {
  const auto [rc, out] = run(mpirun_command("--size 20000 --steps 10 --slow-rank 1 --slow-factor 5 --json"));
  ASSERT_EQ(rc, 0) << out;
  const auto doc = gpulab::Json::parse(out)["straggler"];
  EXPECT_EQ(doc["world"].get<int>(), 4);
  EXPECT_EQ(doc["stragglers"], gpulab::Json::array({1})) << doc.dump(1);
  EXPECT_TRUE(doc["injected_rank_named"].get<bool>());
}

}  // namespace
