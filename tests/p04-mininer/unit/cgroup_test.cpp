// Finding the cgroup hierarchies and choosing v1 or v2 per controller: the
// lab's pitfall 3 (a hybrid host has no v2 memory controller).
#include "mininer/cgroup.hpp"

#include <gtest/gtest.h>

#include "gpulab/errors.hpp"

namespace {

using mininer::CgroupPreference;
using mininer::CgroupVersion;

// This machine's shape: v1 controllers, cgroup2 at /sys/fs/cgroup/unified with no memory.
const char* kHybridMountinfo =
    "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
    "30 22 0:26 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n"
    "31 30 0:27 / /sys/fs/cgroup/unified rw shared:9 - cgroup2 cgroup2 rw\n"
    "33 30 0:29 / /sys/fs/cgroup/memory rw shared:11 - cgroup cgroup rw,memory\n"
    "34 30 0:30 / /sys/fs/cgroup/devices rw shared:12 - cgroup cgroup rw,devices\n"
    "35 30 0:31 / /sys/fs/cgroup/cpu,cpuacct rw shared:13 - cgroup cgroup rw,cpu,cpuacct\n"
    "36 30 0:32 / /sys/fs/cgroup/systemd rw shared:14 - cgroup cgroup rw,xattr,name=systemd\n"
    "40 22 0:33 /sub /mnt/bound rw - cgroup cgroup rw,pids\n";

const char* kPureV2Mountinfo =
    "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
    "28 22 0:25 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";

TEST(Mountinfo, FindsV1ControllersAndTheUnifiedHierarchy) {
  const auto m = mininer::parse_mountinfo(kHybridMountinfo);
  EXPECT_EQ(m.unified, "/sys/fs/cgroup/unified");
  EXPECT_EQ(m.v1.at("memory"), "/sys/fs/cgroup/memory");
  EXPECT_EQ(m.v1.at("devices"), "/sys/fs/cgroup/devices");
  EXPECT_EQ(m.v1.at("cpu"), "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_EQ(m.v1.at("cpuacct"), "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_EQ(m.v1.count("name=systemd"), 0u);
  EXPECT_EQ(m.v1.count("pids"), 0u) << "a bind of a sub-tree is not the hierarchy";
}

TEST(Mountinfo, PureV2HasNoV1Controllers) {
  const auto m = mininer::parse_mountinfo(kPureV2Mountinfo);
  EXPECT_EQ(m.unified, "/sys/fs/cgroup");
  EXPECT_TRUE(m.v1.empty());
}

TEST(ProcCgroup, ReadsV1PathsAndTheV2Line) {
  const auto m = mininer::parse_proc_cgroup(
      "5:devices:/\n4:memory:/process_api/5a99\n2:cpu,cpuacct:/x\n1:name=systemd:/\n0::/"
      "init.scope\n");
  EXPECT_EQ(m.unified, "/init.scope");
  EXPECT_EQ(m.v1.at("memory"), "/process_api/5a99");
  EXPECT_EQ(m.v1.at("devices"), "/");
  EXPECT_EQ(m.v1.at("cpuacct"), "/x");
}

TEST(Plan, HybridHostUsesV1ForMemoryAndDevices) {
  const auto m = mininer::parse_mountinfo(kHybridMountinfo);
  const auto plan = mininer::plan_cgroups(m, "hugetlb\n", CgroupPreference::kAuto, true, true);
  EXPECT_EQ(plan.memory, CgroupVersion::kV1);
  EXPECT_EQ(plan.devices, CgroupVersion::kV1);
}

TEST(Plan, HybridHostCanPutTheDeviceProgramOnV2) {
  const auto m = mininer::parse_mountinfo(kHybridMountinfo);
  const auto plan = mininer::plan_cgroups(m, "hugetlb\n", CgroupPreference::kV2, false, true);
  EXPECT_FALSE(plan.memory.has_value());
  EXPECT_EQ(plan.devices, CgroupVersion::kV2);
}

TEST(Plan, HybridHostHasNoV2Memory) {
  const auto m = mininer::parse_mountinfo(kHybridMountinfo);
  try {
    mininer::plan_cgroups(m, "hugetlb\n", CgroupPreference::kV2, true, false);
    FAIL() << "expected Unsupported";
  } catch (const gpulab::Unsupported& e) {
    EXPECT_NE(std::string(e.what()).find("has no memory controller"), std::string::npos)
        << e.what();
  }
}

TEST(Plan, PureV2HostUsesV2ForBoth) {
  const auto m = mininer::parse_mountinfo(kPureV2Mountinfo);
  const auto plan =
      mininer::plan_cgroups(m, "cpuset cpu io memory pids\n", CgroupPreference::kAuto, true, true);
  EXPECT_EQ(plan.memory, CgroupVersion::kV2);
  EXPECT_EQ(plan.devices, CgroupVersion::kV2);
  EXPECT_THROW(mininer::plan_cgroups(m, "cpu memory\n", CgroupPreference::kV1, true, false),
               gpulab::Unsupported);
}

TEST(Plan, NoHierarchyAtAllIsUnsupported) {
  const mininer::CgroupMounts none;
  EXPECT_THROW(mininer::plan_cgroups(none, "", CgroupPreference::kAuto, true, false),
               gpulab::Unsupported);
  EXPECT_THROW(mininer::plan_cgroups(none, "", CgroupPreference::kAuto, false, true),
               gpulab::Unsupported);
  const auto plan = mininer::plan_cgroups(none, "", CgroupPreference::kAuto, false, false);
  EXPECT_FALSE(plan.memory || plan.devices);
}

TEST(KeyedValue, ReadsOomKillFromV1AndV2Files) {
  EXPECT_EQ(mininer::keyed_value("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n", "oom_kill"), 3u);
  EXPECT_EQ(mininer::keyed_value("low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\noom_group_kill 0\n",
                                 "oom_kill"),
            1u);
  EXPECT_FALSE(mininer::keyed_value("oom_kill_disable 0\n", "oom_kill").has_value());
}

}  // namespace
