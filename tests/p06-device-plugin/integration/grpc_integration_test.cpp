// The plugin and the mock kubelet over real gRPC on Unix sockets in a
// temporary directory: registration, ListAndWatch, Allocate per mode, the
// refusals as gRPC status codes, kubelet restarts and clean shutdown.
#include <gtest/gtest.h>
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "api.grpc.pb.h"
#include "device_plugin/mock_kubelet.hpp"
#include "device_plugin/plugin_server.hpp"
#include "device_plugin/walkthrough.hpp"
#include "gpulab_test/program_run.hpp"

namespace dp = device_plugin;
using namespace std::chrono_literals;

namespace {

bool exists(const std::string& p) { return std::filesystem::exists(p); }

struct Rig {
  dp::TempDir dir;
  dp::MockKubelet kubelet{dir.path()};
  dp::DeviceState state;
  dp::PluginRunner plugin{state, dir.path()};
  explicit Rig(dp::Mode mode, dp::NodeConfig node = dp::default_node()) : state(std::move(node), mode) {
    kubelet.start();
    plugin.start();
  }
  ~Rig() {
    plugin.stop();
    kubelet.stop();
  }
};

// A child process, killed if a test leaves it running.
struct Child {
  pid_t pid = -1;
  explicit Child(std::vector<std::string> args) {
    pid = fork();
    if (pid == 0) {
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  // Exit status, or -1 if it did not exit within the timeout.
  int wait_exit(std::chrono::milliseconds timeout) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < end) {
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(20ms);
    }
    return -1;
  }
  ~Child() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
};

const std::string kPlugin = std::string(GPULAB_BIN_DIR) + "/gpu-device-plugin";

}  // namespace

TEST(Grpc, RegistersWithVersionResourceAndEndpoint) {
  Rig rig(dp::Mode::kWhole);
  ASSERT_TRUE(rig.kubelet.wait_for_capacity("nvidia.com/gpu", 4, 10s));
  const auto regs = rig.kubelet.registrations();
  ASSERT_EQ(regs.size(), 1u);
  EXPECT_EQ(regs[0].version, "v1beta1");
  EXPECT_EQ(regs[0].resource, "nvidia.com/gpu");
  EXPECT_EQ(regs[0].endpoint, "nvidia-gpu.sock");
  EXPECT_TRUE(regs[0].result.ok());
  EXPECT_TRUE(exists(rig.dir.path() + "/nvidia-gpu.sock"));
}

TEST(Grpc, EachModeAdvertisesAndAllocatesOverTheWire) {
  {
    Rig rig(dp::Mode::kTimeslice);
    ASSERT_TRUE(rig.kubelet.wait_for_capacity("nvidia.com/gpu", 16, 10s));
    const auto a = rig.kubelet.allocate_ids("nvidia.com/gpu", {"GPU-2::1"});
    ASSERT_TRUE(a.ok()) << a.message;
    EXPECT_EQ(a.containers.at(0).envs.at("NVIDIA_VISIBLE_DEVICES"), "GPU-2");
    EXPECT_EQ(a.containers.at(0).devices.at(0).host_path, "/dev/nvidia2");
  }
  {
    Rig rig(dp::Mode::kMig);
    ASSERT_TRUE(rig.kubelet.wait_for_capacity("nvidia.com/mig-1g.10gb", 28, 10s));
    const auto a = rig.kubelet.allocate_ids("nvidia.com/mig-1g.10gb", {"MIG-1-5"});
    ASSERT_TRUE(a.ok()) << a.message;
    EXPECT_EQ(a.containers.at(0).envs.at("NVIDIA_VISIBLE_DEVICES"), "MIG-GPU-1/5/0");
  }
}

TEST(Grpc, MpsReplicasCarryTheMpsEnvAndMountsOverTheWire) {
  Rig rig(dp::Mode::kMps);
  ASSERT_TRUE(rig.kubelet.wait_for_capacity("nvidia.com/gpu", 16, 10s));
  const auto a = rig.kubelet.allocate_ids("nvidia.com/gpu", {"GPU-3::2"});
  ASSERT_TRUE(a.ok()) << a.message;
  const auto& c = a.containers.at(0);
  EXPECT_EQ(c.envs.at("NVIDIA_VISIBLE_DEVICES"), "GPU-3");
  EXPECT_EQ(c.envs.at("CUDA_MPS_PIPE_DIRECTORY"), "/mps/nvidia.com/gpu/pipe");
  EXPECT_EQ(c.envs.at("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), "25");
  EXPECT_EQ(c.envs.at("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), "0=20480M");
  int mps_mounts = 0;
  for (const auto& m : c.mounts) mps_mounts += m.host_path.starts_with("/run/nvidia/mps/") ? 1 : 0;
  EXPECT_EQ(mps_mounts, 2);
  EXPECT_EQ(rig.kubelet.allocate_ids("nvidia.com/gpu", {"GPU-2::0", "GPU-2::1"}).code_name, "INVALID_ARGUMENT");
  // The kubelet's own pick for a 2-replica pod spreads over GPUs, which MPS accepts.
  const auto pod = rig.kubelet.allocate("nvidia.com/gpu", 2);
  ASSERT_TRUE(pod.ok()) << pod.message;
  EXPECT_EQ(pod.containers.at(0).envs.at("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), "0=20480M,1=20480M");
}

TEST(Grpc, TwoReplicasOfGpu0YieldTheSameNvidiaVisibleDevices) {
  Rig rig(dp::Mode::kTimeslice);
  ASSERT_TRUE(rig.kubelet.wait_for_capacity("nvidia.com/gpu", 16, 10s));
  const auto a = rig.kubelet.allocate_ids("nvidia.com/gpu", {"GPU-0::0"});
  const auto b = rig.kubelet.allocate_ids("nvidia.com/gpu", {"GPU-0::3"});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.containers[0].envs.at("NVIDIA_VISIBLE_DEVICES"), b.containers[0].envs.at("NVIDIA_VISIBLE_DEVICES"));
}

TEST(Grpc, RefusalsArriveAsStatusCodes) {
  Rig rig(dp::Mode::kTimeslice);
  ASSERT_TRUE(rig.kubelet.wait_for_capacity("nvidia.com/gpu", 16, 10s));
  EXPECT_EQ(rig.kubelet.allocate_ids("nvidia.com/gpu", {"GPU-0::4"}).code_name, "INVALID_ARGUMENT");
  EXPECT_EQ(rig.kubelet.allocate_ids("nvidia.com/gpu", {"GPU-7::0"}).code_name, "NOT_FOUND");
  ASSERT_TRUE(rig.kubelet.allocate_ids("nvidia.com/gpu", {"GPU-1::0"}).ok());
  EXPECT_EQ(rig.kubelet.allocate_ids("nvidia.com/gpu", {"GPU-1::0"}).code_name, "ALREADY_EXISTS");
  rig.state.mark_unhealthy(3, 79);
  ASSERT_TRUE(rig.kubelet.wait_for_capacity("nvidia.com/gpu", 12, 10s));  // ListAndWatch re-sent
  const auto sick = rig.kubelet.allocate_ids("nvidia.com/gpu", {"GPU-3::0"});
  EXPECT_EQ(sick.code_name, "FAILED_PRECONDITION");
  EXPECT_EQ(sick.message, "device 'GPU-3::0' is unhealthy (GPU-3 had Xid 79)");
}

TEST(Grpc, KubeletAllocationUsesThePreferredNvlinkPair) {
  Rig rig(dp::Mode::kWhole);
  ASSERT_TRUE(rig.kubelet.wait_for_capacity("nvidia.com/gpu", 4, 10s));
  ASSERT_TRUE(rig.kubelet.allocate_ids("nvidia.com/gpu", {"GPU-1"}).ok());
  // Free: GPU-0, GPU-2, GPU-3. The pair beats the lone GPU-0.
  const auto a = rig.kubelet.allocate("nvidia.com/gpu", 2);
  ASSERT_TRUE(a.ok()) << a.message;
  EXPECT_EQ(a.ids, (std::vector<std::string>{"GPU-2", "GPU-3"}));
}

TEST(Grpc, KubeletRejectsWrongVersionBadNameAndDuplicateResource) {
  dp::TempDir dir;
  dp::MockKubelet kubelet(dir.path());
  kubelet.start();
  auto stub = v1beta1::Registration::NewStub(
      grpc::CreateChannel("unix://" + dir.path() + "/kubelet.sock", grpc::InsecureChannelCredentials()));
  auto reg = [&](const std::string& version, const std::string& resource, const std::string& endpoint) {
    v1beta1::RegisterRequest req;
    req.set_version(version);
    req.set_resource_name(resource);
    req.set_endpoint(endpoint);
    v1beta1::Empty resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 5s);
    return stub->Register(&ctx, req, &resp);
  };
  EXPECT_EQ(reg("v1alpha", "nvidia.com/gpu", "a.sock").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(reg("v1beta1", "gpu", "a.sock").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(reg("v1beta1", "nvidia.com/gpu", "../a.sock").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  // A live plugin holds nvidia.com/gpu; a second endpoint claiming it is refused.
  dp::DeviceState state(dp::default_node(), dp::Mode::kWhole);
  dp::PluginRunner plugin(state, dir.path());
  plugin.start();
  ASSERT_TRUE(kubelet.wait_for_capacity("nvidia.com/gpu", 4, 10s));
  const auto dup = reg("v1beta1", "nvidia.com/gpu", "other.sock");
  EXPECT_EQ(dup.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(dup.error_message(), "resource nvidia.com/gpu is already registered by nvidia-gpu.sock");
  plugin.stop();
  kubelet.stop();
}

TEST(Grpc, PluginReRegistersWhenTheKubeletRestarts) {
  dp::TempDir dir;
  dp::DeviceState state(dp::default_node(), dp::Mode::kWhole);
  dp::PluginRunner plugin(state, dir.path());
  plugin.start();  // before any kubelet: it waits for kubelet.sock
  {
    dp::MockKubelet first(dir.path());
    first.start();
    ASSERT_TRUE(first.wait_for_capacity("nvidia.com/gpu", 4, 10s));
    first.stop();  // kubelet.sock disappears
  }
  EXPECT_FALSE(exists(dir.path() + "/kubelet.sock"));
  dp::MockKubelet second(dir.path());
  second.start();  // deletes the plugin's socket, as a real kubelet does
  ASSERT_TRUE(second.wait_for_capacity("nvidia.com/gpu", 4, 10s));
  EXPECT_TRUE(exists(dir.path() + "/nvidia-gpu.sock"));
  EXPECT_EQ(second.registrations().size(), 1u);
  // The kubelet connects back (and counts the devices) while its Register
  // answer is still on the way to the plugin, which counts after the answer.
  EXPECT_TRUE(second.wait_until([&] { return plugin.registrations() == 2; }, 10s))
      << plugin.registrations();
  plugin.stop();
  second.stop();
}

TEST(Process, SigtermShutsDownCleanlyAndRemovesTheSocket) {
  dp::TempDir dir;
  dp::MockKubelet kubelet(dir.path());
  kubelet.start();
  const std::string features = dir.path() + "/features";
  Child plugin({kPlugin, "--mode", "timeslice", "--socket-dir", dir.path(), "--feature-file", features});
  ASSERT_TRUE(kubelet.wait_for_capacity("nvidia.com/gpu", 16, 10s));
  EXPECT_TRUE(exists(dir.path() + "/nvidia-gpu.sock"));
  std::ifstream f(features);
  std::string first;
  std::getline(f, first);
  EXPECT_EQ(first, "nvidia.com/gpu.count=4");
  kill(plugin.pid, SIGTERM);
  EXPECT_EQ(plugin.wait_exit(10s), 0);
  EXPECT_FALSE(exists(dir.path() + "/nvidia-gpu.sock"));
  // The stream ended: the kubelet no longer counts the devices.
  EXPECT_TRUE(kubelet.wait_for_capacity("nvidia.com/gpu", 0, 10s));
  kubelet.stop();
}

// The program itself in MPS mode, with the replicas from its node config and
// the label in its feature file, allocated by the mock kubelet.
TEST(Process, MpsModeFromTheCommandLineAndTheConfig) {
  dp::TempDir dir;
  dp::MockKubelet kubelet(dir.path());
  kubelet.start();
  const std::string cfg = dir.path() + "/node.json";
  std::ofstream(cfg) << R"({"gpus": 2, "memory_gb": 40, "mps": {"replicas": 3}})";
  const std::string features = dir.path() + "/features";
  Child plugin({kPlugin, "--mode", "mps", "--socket-dir", dir.path(), "--config", cfg, "--feature-file", features});
  ASSERT_TRUE(kubelet.wait_for_capacity("nvidia.com/gpu", 6, 10s));
  const auto a = kubelet.allocate_ids("nvidia.com/gpu", {"GPU-1::2"});
  ASSERT_TRUE(a.ok()) << a.message;
  EXPECT_EQ(a.containers.at(0).envs.at("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), "33");
  EXPECT_EQ(a.containers.at(0).envs.at("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"), "0=13653M");  // 40 GiB / 3
  EXPECT_EQ(kubelet.allocate_ids("nvidia.com/gpu", {"GPU-1::3"}).code_name, "INVALID_ARGUMENT");
  std::ifstream f(features);
  const std::string labels((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(labels.find("nvidia.com/gpu.sharing-strategy=mps\n"), std::string::npos) << labels;
  EXPECT_NE(labels.find("nvidia.com/gpu.replicas=3\n"), std::string::npos) << labels;
  kill(plugin.pid, SIGTERM);
  EXPECT_EQ(plugin.wait_exit(10s), 0);
  kubelet.stop();
}

TEST(Process, ControlFileXidMakesTheRunningPluginReadvertise) {
  dp::TempDir dir;
  dp::MockKubelet kubelet(dir.path());
  kubelet.start();
  const std::string control = dir.path() + "/control";
  std::ofstream(control) << "";
  Child plugin({kPlugin, "--mode", "whole", "--socket-dir", dir.path(), "--control-file", control});
  ASSERT_TRUE(kubelet.wait_for_capacity("nvidia.com/gpu", 4, 10s));
  std::ofstream(control, std::ios::app) << "xid 2 79\n";
  ASSERT_TRUE(kubelet.wait_for_capacity("nvidia.com/gpu", 3, 10s));
  EXPECT_EQ(kubelet.allocate_ids("nvidia.com/gpu", {"GPU-2"}).code_name, "FAILED_PRECONDITION");
  kill(plugin.pid, SIGTERM);
  EXPECT_EQ(plugin.wait_exit(10s), 0);
  kubelet.stop();
}

// A second plugin on the same socket directory used to unlink the live
// socket and serve in its place (and run on). Now it refuses to start, and the
// first keeps its socket. `timeout 20`: before the fix the second never exited.
TEST(Process, ASecondPluginOnALiveSocketRefusesToStart) {
  dp::TempDir dir;
  dp::MockKubelet kubelet(dir.path());
  kubelet.start();
  Child first({kPlugin, "--mode", "whole", "--socket-dir", dir.path()});
  ASSERT_TRUE(kubelet.wait_for_capacity("nvidia.com/gpu", 4, 10s));
  const std::string sock = dir.path() + "/nvidia-gpu.sock";
  struct stat before {};
  ASSERT_EQ(::stat(sock.c_str(), &before), 0);
  const auto r = gpulab_test::run_program("gpu-device-plugin", "--socket-dir " + dir.path(),
                                          gpulab_test::Stderr::kSeparate, "timeout 20");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "gpu-device-plugin: error: " + sock +
                       " is in use: another process serves on it (a second gpu-device-plugin?); stop that "
                       "one first\n");
  struct stat after {};
  ASSERT_EQ(::stat(sock.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);  // still the first plugin's socket
  // A second mock kubelet likewise.
  const auto k = gpulab_test::run_program("mock-kubelet", "--socket-dir " + dir.path() + " --timeout 5",
                                          gpulab_test::Stderr::kSeparate, "timeout 20");
  EXPECT_EQ(k.exit_code, 1);
  EXPECT_NE(k.err.find("kubelet.sock is in use: another process serves on it (a second kubelet?)"),
            std::string::npos)
      << k.err;
  EXPECT_TRUE(kubelet.allocate_ids("nvidia.com/gpu", {"GPU-0"}).ok());
  kill(first.pid, SIGTERM);
  EXPECT_EQ(first.wait_exit(10s), 0);
  kubelet.stop();
}

// A kubelet that refuses every registration, as one would for an unsupported version.
class RefusingKubelet final : public v1beta1::Registration::Service {
  grpc::Status Register(grpc::ServerContext*, const v1beta1::RegisterRequest* req, v1beta1::Empty*) override {
    return {grpc::StatusCode::INVALID_ARGUMENT, "version " + req->version() + " is not supported"};
  }
};

TEST(Process, ARefusedRegistrationEndsThePluginWithExit1) {
  dp::TempDir dir;
  RefusingKubelet service;
  grpc::ServerBuilder b;
  b.AddListeningPort("unix://" + dir.path() + "/kubelet.sock", grpc::InsecureServerCredentials());
  b.RegisterService(&service);
  auto server = b.BuildAndStart();
  ASSERT_TRUE(server);
  Child plugin({kPlugin, "--mode", "whole", "--socket-dir", dir.path()});
  EXPECT_EQ(plugin.wait_exit(10s), 1);
  EXPECT_FALSE(exists(dir.path() + "/nvidia-gpu.sock"));
  server->Shutdown();
}

TEST(Process, MalformedConfigExits2WithTheReason) {
  dp::TempDir dir;
  const std::string cfg = dir.path() + "/bad.json";
  std::ofstream(cfg) << R"({"gpus": 4, "timeslice": {"replicas": -2}})";
  const std::string cmd = kPlugin + " --mode timeslice --socket-dir " + dir.path() + " --config " + cfg + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  char buf[512] = {};
  const std::string out = fgets(buf, sizeof buf, p) != nullptr ? buf : "";
  const int status = pclose(p);
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_EQ(out, "gpu-device-plugin: error: " + cfg + ": 'timeslice.replicas' must be between 1 and 64\n");
}

namespace {

// Runs `cmd 2>&1` and returns {exit status, output}.
std::pair<int, std::string> shell(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p) != nullptr) out += buf;
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

}  // namespace

TEST(Process, ADirectoryOrDeviceIsNotAConfig) {
  // Before: a directory read as "cannot open", /dev/zero grew without bound.
  dp::TempDir dir;
  for (const auto& [cfg, why] : {std::pair<std::string, std::string>{dir.path(), "is a directory, not a file"},
                                 {"/dev/zero", "is a device, not a file"}}) {
    const auto [code, out] = shell(kPlugin + " --mode whole --socket-dir " + dir.path() + " --config " + cfg);
    EXPECT_EQ(code, 2) << out;
    EXPECT_EQ(out, "gpu-device-plugin: error: node config: '" + cfg + "' " + why + "\n");
  }
}

TEST(Process, MockKubeletTimeoutMustBeFinite) {
  // Before: NaN passed CLI::Range and became an undefined cast to milliseconds.
  dp::TempDir dir;
  for (const char* v : {"nan", "inf", "0", "-1"}) {
    const auto [code, out] = shell(std::string(GPULAB_BIN_DIR) + "/mock-kubelet --socket-dir " + dir.path() +
                                   " --timeout " + v);
    EXPECT_EQ(code, 2) << v << ": " << out;
    EXPECT_EQ(out, std::string("mock-kubelet: error: --timeout: must be a finite number in [0.1, 3600], got '") + v +
                       "' (see --help)\n");
  }
}

// Started with stdout closed, the walkthrough's first directory took fd 1 and
// its report was written there ("Invalid argument"); now fd 1 is held and the
// run fails saying stdout could not be written.
TEST(Walkthrough, AClosedStdoutIsReportedAsSuch) {
  const auto r = gpulab_test::run_program("gpu-device-plugin", "walkthrough >&-");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "gpu-device-plugin: error: cannot write standard output: Bad file descriptor\n");
}

TEST(Walkthrough, PrintsTheCurriculumBlock) {
  const dp::DemoReport r = dp::walkthrough();
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.text,
            "mode=whole       resource=nvidia.com/gpu        advertised units=4   (4 physical GPUs)\n"
            "  allocate [GPU-0 GPU-1] -> env NVIDIA_VISIBLE_DEVICES=GPU-0,GPU-1\n"
            "                            devices /dev/nvidia0 /dev/nvidia1\n"
            "  isolation: STRONG (dedicated physical devices)\n"
            "\n"
            "mode=timeslice   resource=nvidia.com/gpu        advertised units=16  (4 GPUs x 4 replicas)\n"
            "  allocate [GPU-0::3] -> env NVIDIA_VISIBLE_DEVICES=GPU-0  (replica 3 shares GPU-0!)\n"
            "  isolation: NONE (replicas share memory + faults — WARMUP Ch. 4)\n"
            "\n"
            "mode=mig         resource=nvidia.com/mig-1g.10gb advertised units=28  (4 GPUs x 7 instances)\n"
            "  allocate [MIG-0-2] -> env NVIDIA_VISIBLE_DEVICES=MIG-GPU-0/2/0\n"
            "  isolation: STRONG (hardware-partitioned instance)\n");
}

TEST(Walkthrough, ExtensionChecksAllHold) {
  const dp::DemoReport r = dp::extensions();
  EXPECT_TRUE(r.passed) << r.text;
}
