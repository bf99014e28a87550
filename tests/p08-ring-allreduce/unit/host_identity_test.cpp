// Host identity decides shared memory or TCP: a forked process is on the same
// host; an identity that could not be read matches nothing, not even itself.
#include "ring_allreduce/host_identity.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace {

TEST(HostIdentity, AForkedProcessIsOnTheSameHost) {
  const std::string here = ring::host_identity();
  ASSERT_EQ(here.rfind("boot=", 0), 0u) << here;
  EXPECT_NE(here.find(" net:["), std::string::npos) << here;
  EXPECT_NE(here.find(" pid:["), std::string::npos) << here;
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string child = ring::host_identity();
    ::_exit(ring::same_host(here, child) ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(HostIdentity, OtherNamespacesAndUnknownHostsNeverMatch) {
  const std::string here = ring::host_identity();
  std::string other_netns = here;
  other_netns.insert(other_netns.find(" net:[") + 6, "1");  // another namespace's inode
  EXPECT_FALSE(ring::same_host(here, other_netns));
  EXPECT_TRUE(ring::same_host(here, here));
  EXPECT_FALSE(ring::same_host("unknown host (pid 7)", "unknown host (pid 7)"));
}

}  // namespace
