// gpu-device-plugin --inventory over the real v1beta1 API: the program serves
// the node inventory the platform's agent writes, the mock kubelet registers
// one resource per HAL backend, allocates, and sees a health change the agent
// writes into the file; bad inventories exit 2 naming the file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "device_plugin/mock_kubelet.hpp"
#include "device_plugin/walkthrough.hpp"
#include "gpulab/inventory/inventory_json.hpp"
#include "gpulab/output_file.hpp"
#include "gpulab_test/program_run.hpp"
#include "hal_accelerator.hpp"

namespace dp = device_plugin;
namespace inv = gpulab::inventory;
using device_plugin_test::hal_accelerator;
using namespace std::chrono_literals;

namespace {

const std::string kPlugin = std::string(GPULAB_BIN_DIR) + "/gpu-device-plugin";

// The plugin as a child process, killed if a test leaves it running.
struct Plugin {
  pid_t pid = -1;
  explicit Plugin(std::vector<std::string> args, const std::string& stderr_file = "") {
    args.insert(args.begin(), kPlugin);
    pid = fork();
    if (pid == 0) {
      if (!stderr_file.empty()) {
        const int fd = ::open(stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || ::dup2(fd, 2) < 0) _exit(127);
      }
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }
  int stop() {
    kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  ~Plugin() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
};

// `gpulabd agent --devices cuda:2,cpu_ref:1` as it reports itself.
inv::NodeInventory agent_node() {
  inv::NodeInventory n;
  n.node = "node-a";
  n.accelerators = {hal_accelerator("cuda", 0, 0), hal_accelerator("cuda", 1, 1),
                    hal_accelerator("cpu_ref", 0, 2)};
  n.accelerators[1].domain.numa_node = 1;
  return n;
}

// True once `file` holds `text` (the plugin's log), within `timeout`.
bool wait_for_text(const std::string& file, const std::string& text,
                   std::chrono::milliseconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    std::ifstream f(file);
    const std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (all.find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

void write_inventory(const std::string& path, const inv::NodeInventory& n) {
  // As the agent writes it: a temporary file renamed over the old one.
  ASSERT_TRUE(gpulab::write_file(path, inv::to_json(n).dump(2) + "\n"));
}

}  // namespace

TEST(InventoryProcess, AdvertisesTheAgentsDevicesAndFollowsTheirHealth) {
  dp::TempDir dir;
  const std::string file = dir.path() + "/inventory.json";
  write_inventory(file, agent_node());
  dp::MockKubelet kubelet(dir.path());
  kubelet.start();
  const std::string features = dir.path() + "/features";
  Plugin plugin({"--inventory", file, "--socket-dir", dir.path(), "--feature-file", features});
  ASSERT_TRUE(kubelet.wait_for_capacity("gpulab.dev/cuda", 2, 20s));
  ASSERT_TRUE(kubelet.wait_for_capacity("gpulab.dev/cpu_ref", 1, 20s));
  std::vector<std::string> resources;
  for (const auto& r : kubelet.registrations()) {
    EXPECT_EQ(r.version, "v1beta1");
    EXPECT_EQ(r.result.code_name, "OK");
    resources.push_back(r.resource);
  }
  EXPECT_EQ(resources, (std::vector<std::string>{"gpulab.dev/cuda", "gpulab.dev/cpu_ref"}));
  const auto cuda = kubelet.devices("gpulab.dev/cuda");
  ASSERT_EQ(cuda.size(), 2u);
  EXPECT_EQ(cuda[0].id, "cuda:0");
  EXPECT_EQ(cuda[0].numa_node, -1) << "no NUMA node in the inventory: no topology sent";
  EXPECT_EQ(cuda[1].id, "cuda:1");
  EXPECT_EQ(cuda[1].numa_node, 1);

  // The agent sees an Xid 79 on cuda:0 and rewrites the file.
  auto n = agent_node();
  n.accelerators[0].health = inv::Health::unhealthy("Xid 79: GPU has fallen off the bus");
  write_inventory(file, n);
  ASSERT_TRUE(kubelet.wait_for_capacity("gpulab.dev/cuda", 1, 20s));
  EXPECT_EQ(kubelet.allocate_ids("gpulab.dev/cuda", {"cuda:0"}).code_name, "FAILED_PRECONDITION");
  const auto a = kubelet.allocate("gpulab.dev/cuda", 1);
  ASSERT_TRUE(a.ok()) << a.message;
  EXPECT_EQ(a.ids, std::vector<std::string>{"cuda:1"});
  EXPECT_EQ(a.containers.at(0).envs.at("CUDA_VISIBLE_DEVICES"), "1");
  ASSERT_FALSE(a.containers.at(0).devices.empty());
  EXPECT_EQ(a.containers.at(0).devices.front().host_path, "/dev/nvidia1");
  const auto c = kubelet.allocate("gpulab.dev/cpu_ref", 1);
  ASSERT_TRUE(c.ok()) << c.message;
  EXPECT_TRUE(c.containers.at(0).envs.empty());
  EXPECT_TRUE(c.containers.at(0).devices.empty());

  // Recovered (a replaced GPU): advertised again.
  write_inventory(file, agent_node());
  EXPECT_TRUE(kubelet.wait_for_capacity("gpulab.dev/cuda", 2, 20s));
  std::ifstream f(features);
  const std::string labels((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_EQ(labels,
            "gpulab.dev/cpu_ref.count=1\ngpulab.dev/cuda.count=2\ngpulab.dev/device.count=3\n");
  EXPECT_EQ(plugin.stop(), 0);
  kubelet.stop();
}

TEST(InventoryProcess, AFileThatStopsParsingOrListsOtherDevicesKeepsTheLastHealth) {
  dp::TempDir dir;
  const std::string file = dir.path() + "/inventory.json";
  const std::string log = dir.path() + "/plugin.log";
  write_inventory(file, agent_node());
  dp::MockKubelet kubelet(dir.path());
  kubelet.start();
  Plugin plugin({"--inventory", file, "--socket-dir", dir.path()}, log);
  ASSERT_TRUE(kubelet.wait_for_capacity("gpulab.dev/cuda", 2, 20s));
  ASSERT_TRUE(gpulab::write_file(file, "{\"node\": "));
  ASSERT_TRUE(wait_for_text(log, file + ": not valid JSON", 20s));
  auto n = agent_node();
  n.accelerators.pop_back();  // a device gone: needs a restart, not a silent shrink
  n.accelerators[1].health = inv::Health::unhealthy("Xid 79");
  write_inventory(file, n);
  ASSERT_TRUE(wait_for_text(
      log, file + ": the node's devices changed; restart the plugin to advertise them", 20s));
  EXPECT_EQ(kubelet.capacity("gpulab.dev/cuda"), 2)
      << "cuda:1's health from a file that lists other devices";
  n = agent_node();
  n.accelerators[0].health = inv::Health::unhealthy("Xid 79");
  write_inventory(file, n);  // the plugin follows health again once the file describes its node
  EXPECT_TRUE(kubelet.wait_for_capacity("gpulab.dev/cuda", 1, 20s));
  EXPECT_TRUE(kubelet.devices("gpulab.dev/cuda").at(1).healthy);
  EXPECT_EQ(plugin.stop(), 0);
  kubelet.stop();
}

TEST(InventoryProcess, BadInventoriesExitTwoNamingTheFile) {
  dp::TempDir dir;
  const auto run = [&](const std::string& args) {
    return gpulab_test::run_program("gpu-device-plugin", "--socket-dir " + dir.path() + " " + args,
                                    gpulab_test::Stderr::kSeparate, "timeout 20");
  };
  const std::string bad = dir.path() + "/bad.json";
  std::ofstream(bad) << "{\"node\": \"n\", \"accelerators\": [{\"id\": \"cuda:0\"}]}";
  auto r = run("--inventory " + bad);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpu-device-plugin: error: " + bad + ": accelerators[0].index: missing\n");
  r = run("--inventory " + dir.path() + "/none.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(dir.path() + "/none.json"), std::string::npos) << r.err;
  const std::string good = dir.path() + "/inventory.json";
  write_inventory(good, agent_node());
  r = run("--inventory " + good + " --mode mig");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "gpu-device-plugin: error: --inventory serves whole HAL devices; --mode mig needs "
            "--config\n");
  r = run("--inventory " + good + " --config " + good);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(
      r.err,
      "gpu-device-plugin: error: --inventory and --config both describe the node: give one\n");
}
