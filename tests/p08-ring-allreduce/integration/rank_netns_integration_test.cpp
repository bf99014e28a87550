// --rank-netns and --iface as a user meets them without root or namespaces:
// every mistake is one `error:` line naming the flag, exit 2, before any rank
// starts. The drill itself (root, real namespaces) is root/wrong_nic_test.cpp.
#include <gtest/gtest.h>

#include <string>

#include "gpulab_test/program_run.hpp"

namespace {

gpulab_test::ProgramRun run(const std::string& args, const std::string& env = "") {
  return gpulab_test::run_program("ring-allreduce", args, gpulab_test::Stderr::kSeparate, env);
}

TEST(RankNetnsFlags, IfaceWithoutNamespacesIsRefused) {
  const auto r = run("--world 2 --iface ens2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "ring-allreduce: error: --iface picks the interface between hosts: it needs --rank-netns (ranks on one "
            "host talk over loopback)\n");
}

TEST(RankNetnsFlags, OneNamespacePerRank) {
  const auto r = run("--world 3 --rank-netns a,b");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "ring-allreduce: error: --rank-netns names 2 namespaces for a world of 3: one per rank\n");
}

TEST(RankNetnsFlags, AMissingNamespaceIsNamedWithItsRank) {
  const auto r = run("--world 2 --rank-netns gpulab-no-such-ns-0,gpulab-no-such-ns-1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "ring-allreduce: error: rank 0 (--rank-netns gpulab-no-such-ns-0): network namespace "
            "'gpulab-no-such-ns-0': /run/netns/gpulab-no-such-ns-0: No such file or directory\n");
}

TEST(RankNetnsFlags, AFileThatIsNotANamespaceIsRefused) {
  const auto r = run("--world 2 --rank-netns /dev/null,/dev/null");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("error: rank 0 (--rank-netns /dev/null): network namespace '/dev/null': setns: "),
            std::string::npos)
      << r.err;
}

TEST(RankNetnsFlags, TheWorldSweepCannotKeepOneNamespacePerRank) {
  const auto r = run("--world 2 --rank-netns a,b --world-sweep");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("error: --world-sweep changes the world size"), std::string::npos) << r.err;
}

TEST(RankNetnsFlags, OnOneHostNcclSocketIfnameChangesNothing) {
  // The variable only matters between hosts: a plain run prints what it always did.
  const auto plain = run("--world 2 --size 1000");
  const auto with_env = run("--world 2 --size 1000", "env NCCL_SOCKET_IFNAME=nosuch0");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(with_env.exit_code, 0) << with_env.err;
  EXPECT_EQ(plain.out, with_env.out);
}

}  // namespace
