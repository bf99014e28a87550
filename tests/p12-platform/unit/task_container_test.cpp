// The pure parts of running a task in a container: the isolation decision,
// which device nodes and rules a task gets, and the mount plan.
#include "platform/task_container.hpp"

#include <gtest/gtest.h>

#include <set>

#include "gpulab/errors.hpp"
#include "platform/control_server.hpp"

namespace {

using namespace platform;

TEST(Isolation, ModesParseAndAnUnknownOneIsNamed) {
  EXPECT_EQ(parse_isolation_mode("auto"), IsolationMode::kAuto);
  EXPECT_EQ(parse_isolation_mode("container"), IsolationMode::kContainer);
  EXPECT_EQ(parse_isolation_mode("process"), IsolationMode::kProcess);
  try {
    parse_isolation_mode("docker");
    FAIL() << "accepted 'docker'";
  } catch (const gpulab::UsageError& e) {
    EXPECT_STREQ(e.what(), "--isolation: expected auto, container or process, got 'docker'");
  }
}

TEST(Isolation, AutoFallsBackToProcessesWithTheReason) {
  const auto d = decide_isolation(IsolationMode::kAuto, std::string("not running as root (namespaces, mounts and cgroups need it)"));
  EXPECT_EQ(d.isolation, "process");
  EXPECT_EQ(d.reason, "tasks run as plain processes: not running as root (namespaces, mounts and cgroups need it)");
  EXPECT_EQ(decide_isolation(IsolationMode::kAuto, std::nullopt).isolation, "container");
}

TEST(Isolation, ForcedContainerRefusesWithOneLineAndForcedProcessNeverAsks) {
  try {
    decide_isolation(IsolationMode::kContainer, std::string("no cgroup for the device rules: no devices controller"));
    FAIL() << "a container without a cgroup was accepted";
  } catch (const gpulab::RunError& e) {
    EXPECT_STREQ(e.what(), "--isolation container: no cgroup for the device rules: no devices controller");
  }
  EXPECT_EQ(decide_isolation(IsolationMode::kContainer, std::nullopt).isolation, "container");
  const auto p = decide_isolation(IsolationMode::kProcess, std::nullopt);
  EXPECT_EQ(p.isolation, "process");
  EXPECT_EQ(p.reason, "tasks run as plain processes (--isolation process)");
}

TEST(DeviceNodes, CpuBackendsHaveNoneCudaGetsItsOwnAndTheSharedOnes) {
  const auto all = [](const std::string&) { return true; };
  EXPECT_TRUE(device_nodes_for("cpu_ref:0", "cpu_ref", 0, {}, all).empty());
  EXPECT_TRUE(device_nodes_for("opencl:0", "opencl", 0, {}, all).empty());
  EXPECT_EQ(device_nodes_for("cuda:1", "cuda", 1, {}, all),
            (std::vector<std::string>{"/dev/nvidia1", "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"}));
  // Only what exists: no UVM module loaded, say.
  const std::set<std::string> present{"/dev/nvidia1", "/dev/nvidiactl"};
  const auto some = [&](const std::string& p) { return present.count(p) != 0; };
  EXPECT_EQ(device_nodes_for("cuda:1", "cuda", 1, {}, some), (std::vector<std::string>{"/dev/nvidia1", "/dev/nvidiactl"}));
  EXPECT_EQ(device_nodes_for("fakegpu:0", "fakegpu", 0, {}, all), (std::vector<std::string>{"/dev/fakegpu"}));
}

TEST(DeviceNodes, DeclaredNodesBelongToTheirDeviceOnly) {
  const std::map<std::string, std::vector<std::string>> declared{{"cpu_ref:1", {"/dev/full"}}};
  const auto none = [](const std::string&) { return false; };
  EXPECT_EQ(device_nodes_for("cpu_ref:1", "cpu_ref", 1, declared, none), (std::vector<std::string>{"/dev/full"}));
  EXPECT_TRUE(device_nodes_for("cpu_ref:0", "cpu_ref", 0, declared, none).empty());
}

TEST(DeviceRules, TheStandardSetPlusEachAssignedNode) {
  const std::vector<mininer::DeviceRule> standard{{'c', 1, 3}, {'c', 1, 5}, {'c', 1, 7},
                                                  {'c', 1, 8}, {'c', 1, 9}, {'c', 5, 0}};
  EXPECT_EQ(device_rules_for({}), standard);
  EXPECT_EQ(device_rules_for({"/dev/full"}), standard);  // already in the set: not twice
  auto with_ptmx = standard;
  with_ptmx.push_back({'c', 5, 2});
  EXPECT_EQ(device_rules_for({"/dev/ptmx"}), with_ptmx);
  EXPECT_THROW(device_rules_for({GPULAB_LAB_DIR "/README.md"}), gpulab::UsageError);
  EXPECT_THROW(device_rules_for({"/dev/no-such-node"}), gpulab::UsageError);
}

std::vector<TopEntry> merged_usr() {
  return {{"/usr", "", true}, {"/etc", "", true}, {"/bin", "usr/bin", false}, {"/lib", "usr/lib", false},
          {"/lib64", "usr/lib64", false}, {"/sbin", "usr/sbin", false}, {"/opt", "", true}};
}

TEST(MountPlan, HostUserlandReadOnlyProgramFolderReadOnlyCheckpointsWritable) {
  TaskLaunch l;
  l.task_id = "j-000002.1.0";
  l.program = "/work/x/build/bin/gpulab-task";
  l.args = {"train", "--rank", "0", "--checkpoint-dir", "/tmp/s/checkpoints/j-000002", "--json"};
  l.device_nodes = {"/dev/nvidia0"};
  l.env = {"GPULAB_TASK_ID=j-000002.1.0"};
  l.rootfs = "/tmp/s/agent-a/j-000002.1.0.root";
  l.read_only = {"/work/x/build/lib/hal-backends", "/usr/lib/gpulab"};
  const auto p = plan_task_container(l, merged_usr());
  EXPECT_EQ(p.rootfs, "/tmp/s/agent-a/j-000002.1.0.root");
  EXPECT_EQ(p.hostname, "j-000002.1.0");
  EXPECT_EQ(p.links, (std::vector<std::pair<std::string, std::string>>{
                         {"usr/bin", "/bin"}, {"usr/lib", "/lib"}, {"usr/lib64", "/lib64"}, {"usr/sbin", "/sbin"}}));
  // /usr/lib/gpulab is under /usr already: no second bind.
  EXPECT_EQ(p.binds, (std::vector<BindMount>{{"/usr", "/usr", true},
                                             {"/etc", "/etc", true},
                                             {"/opt", "/opt", true},
                                             {"/work/x/build/bin", "/work/x/build/bin", true},
                                             {"/work/x/build/lib/hal-backends", "/work/x/build/lib/hal-backends", true},
                                             {"/tmp/s/checkpoints/j-000002", "/tmp/s/checkpoints/j-000002", false}}));
  EXPECT_EQ(p.tmpfs, (std::vector<std::string>{"/tmp", "/dev/shm"}));
  EXPECT_EQ(p.devices, (std::vector<std::string>{"/dev/nvidia0"}));
  EXPECT_EQ(p.env, (std::vector<std::string>{"GPULAB_TASK_ID=j-000002.1.0", "HOME=/tmp"}));
  ASSERT_EQ(p.argv.size(), 7U);
  EXPECT_EQ(p.argv[0], "/work/x/build/bin/gpulab-task");
  EXPECT_EQ(p.argv[4], "--checkpoint-dir");
}

TEST(MountPlan, AMatmulWritesNothingAndAProgramUnderUsrNeedsNoBind) {
  TaskLaunch l;
  l.task_id = "j-000001.1.0";
  l.program = "/usr/libexec/gpulab/gpulab-task";
  l.args = {"matmul", "--backend", "cpu_ref", "--json"};
  l.rootfs = "/var/lib/gpulab/j-000001.1.0.root";
  const auto p = plan_task_container(l, merged_usr());
  for (const auto& b : p.binds) EXPECT_TRUE(b.read_only) << b.path;
  EXPECT_EQ(p.binds.size(), 3U);  // /usr, /etc, /opt
  EXPECT_TRUE(p.devices.empty());
}

TEST(MountPlan, HostnameIsTheTaskIdMadeSafe) {
  TaskLaunch l;
  l.task_id = std::string(80, 'x') + "/y";
  l.program = "/usr/bin/true";
  l.rootfs = "/r";
  const auto p = plan_task_container(l, {});
  EXPECT_EQ(p.hostname, std::string(63, 'x'));
  l.task_id = "a b/c";
  EXPECT_EQ(plan_task_container(l, {}).hostname, "a-b-c");
}

TEST(MountPlan, JsonRoundTripAndBadPlansNamed) {
  TaskLaunch l;
  l.task_id = "t";
  l.program = "/opt/g/bin/gpulab-task";
  l.args = {"train", "--checkpoint-dir", "/srv/c"};
  l.rootfs = "/srv/r";
  const auto p = plan_task_container(l, merged_usr());
  const auto back = container_plan_from_json(to_json(p));
  EXPECT_EQ(to_json(back).dump(), to_json(p).dump());
  EXPECT_EQ(back.binds, p.binds);

  auto j = to_json(p);
  j["extra"] = 1;
  try {
    container_plan_from_json(j);
    FAIL();
  } catch (const gpulab::UsageError& e) {
    EXPECT_STREQ(e.what(), "container plan: unknown field 'extra'");
  }
  j = to_json(p);
  j.erase("argv");
  try {
    container_plan_from_json(j);
    FAIL();
  } catch (const gpulab::UsageError& e) {
    EXPECT_STREQ(e.what(), "container plan: 'argv' is missing");
  }
  j = to_json(p);
  j["argv"] = gpulab::Json::array({"gpulab-task"});
  EXPECT_THROW(container_plan_from_json(j), gpulab::UsageError);
}

TEST(Environment, OnlyHalBackendAndLocaleSettingsPassIntoAContainer) {
  for (const char* yes : {"GPULAB_HAL_BACKENDS", "POCL_DEVICES", "OCL_ICD_VENDORS", "CUDA_VISIBLE_DEVICES",
                          "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "ASAN_OPTIONS", "LANG", "LC_ALL", "TZ"}) {
    EXPECT_TRUE(passes_into_container(yes)) << yes;
  }
  for (const char* no : {"PATH", "HOME", "AWS_SECRET_ACCESS_KEY", "SSH_AUTH_SOCK", "LD_PRELOAD", "GPULAB"}) {
    EXPECT_FALSE(passes_into_container(no)) << no;
  }
}

TEST(Environment, FilesThatSanitizerOptionsNameAreFound) {
  const std::set<std::string> present{"/src/tools/tsan.supp", "/src/tools/ubsan.supp"};
  const auto exists = [&](const std::string& p) { return present.count(p) != 0; };
  EXPECT_EQ(files_named_in({"TSAN_OPTIONS=halt_on_error=1 suppressions=/src/tools/tsan.supp",
                            "UBSAN_OPTIONS=print_stacktrace=1:suppressions=/src/tools/ubsan.supp",
                            "ASAN_OPTIONS=log_path=/gone/asan", "GPULAB_X=/src/tools/tsan.supp"},
                           exists),
            (std::vector<std::string>{"/src/tools/tsan.supp", "/src/tools/ubsan.supp"}));
  EXPECT_TRUE(files_named_in({"TSAN_OPTIONS=suppressions=relative.supp"}, exists).empty());
}

TEST(TaskReportJson, DeviceNodesTravelFromTheAgentAndBadOnesAreNamed) {
  TaskReport r{"j-000001.1.0", TaskState::kRunning, -1, "", {}, {}, "container", {"/dev/nvidia0", "/dev/nvidiactl"}};
  const auto back = report_from_json(report_to_json(r));
  EXPECT_EQ(back.isolation, "container");
  EXPECT_EQ(back.device_nodes, r.device_nodes);
  auto j = report_to_json(r);
  j.erase("device_nodes");  // an agent from before the field: none
  EXPECT_TRUE(report_from_json(j).device_nodes.empty());
  j["device_nodes"] = "/dev/nvidia0";
  try {
    report_from_json(j);
    FAIL() << "a string was accepted as the list";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_STREQ(e.what(), "tasks[].device_nodes: expected a list of at most 64 paths");
  }
}

}  // namespace
