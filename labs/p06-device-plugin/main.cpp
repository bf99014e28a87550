// gpu-device-plugin: a Kubernetes device plugin for a fake 4-GPU node, speaking
// the real v1beta1 gRPC API. Serves until SIGTERM; `walkthrough` and
// `extensions` drive it through the mock kubelet and print what happened.
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <ctime>

#include "device_plugin/control.hpp"
#include "device_plugin/device_state.hpp"
#include "device_plugin/inventory_node.hpp"
#include "device_plugin/node_config.hpp"
#include "device_plugin/plugin_server.hpp"
#include "device_plugin/walkthrough.hpp"
#include "gpulab/cli.hpp"
#include "gpulab/file.hpp"
#include "gpulab/json.hpp"

namespace dp = device_plugin;

namespace {

constexpr const char* kProgram = "gpu-device-plugin";

void say(const std::string& s) { fmt::print(stderr, "{}: {}\n", kProgram, s); }

// The control file is appended to while the plugin runs; until it exists (or
// if it grows absurdly) there is simply nothing new to apply.
std::string read_control_file(const std::string& path) {
  constexpr std::size_t kMaxControlBytes = std::size_t{16} << 20;
  return gpulab::read_text_file(path, kMaxControlBytes).value_or("");
}

int print_demo(const dp::DemoReport& r, bool json) {
  if (json) {
    gpulab::print_json(r.json);
  } else {
    fmt::print("{}", r.text);
  }
  return r.passed ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Kubernetes device plugin (v1beta1 gRPC) for a fake GPU node: whole GPUs, time-sliced "
      "replicas or MIG;\n"
      "or, with --inventory, the HAL devices the platform's agent reports.\n"
      "Serves on a Unix socket until SIGTERM; 'walkthrough' drives it through the mock kubelet."};
  app.require_subcommand(0, 1);
  gpulab::CommonOptions common;
  gpulab::add_json_flag(app, common);
  app.fallthrough();
  std::string mode_name = "whole";
  std::string config_path;
  std::string socket_dir{dp::kDevicePluginPath};
  std::string control_file;
  std::string feature_file;
  app.add_option("--mode", mode_name, "whole | timeslice | mig | mps")->capture_default_str();
  app.add_option("--config", config_path, "Node config JSON (default: the curriculum's 4 x H100 node)");
  std::string inventory_path;
  app.add_option(
      "--inventory", inventory_path,
      "Serve the node inventory the platform's agent writes (gpulabd agent --inventory-out): one "
      "gpulab.dev/<backend> resource per HAL backend, whole devices, re-read when its health "
      "changes");
  app.add_option("--socket-dir", socket_dir, "Directory of kubelet.sock and the plugin's own socket")
      ->capture_default_str();
  app.add_option("--control-file", control_file,
                 "File the plugin tails for 'xid <gpu> <code>', 'recover <gpu>', 'release <id>' lines");
  app.add_option("--feature-file", feature_file, "Write node-feature-discovery labels (key=value) here");
  auto* walk = app.add_subcommand("walkthrough", "The curriculum's walkthrough: each mode through the mock kubelet");
  auto* ext = app.add_subcommand("extensions", "MIG geometry, health, feature labels, preferred allocation, MPS");

  return gpulab::run_program(kProgram, app, argc, argv, [&]() -> int {
    if (*walk) return print_demo(dp::walkthrough(), common.json);
    if (*ext) return print_demo(dp::extensions(), common.json);

    const dp::Mode mode = dp::parse_mode(mode_name);
    if (!inventory_path.empty() && !config_path.empty())
      throw gpulab::UsageError("--inventory and --config both describe the node: give one");
    // Stamped before the read, so a rewrite between the two is read again.
    dp::InventoryWatch inventory(inventory_path, say);
    dp::NodeConfig node = !inventory_path.empty() ? dp::load_inventory_node(inventory_path)
                          : config_path.empty()   ? dp::default_node()
                                                  : dp::load_node_config(config_path);
    struct stat st {};
    if (::stat(socket_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      if (socket_dir == dp::kDevicePluginPath)
        throw gpulab::Unsupported(fmt::format("{} does not exist: no kubelet on this machine (use --socket-dir DIR "
                                              "with mock-kubelet)", socket_dir));
      throw gpulab::UsageError(fmt::format("--socket-dir {} is not a directory", socket_dir));
    }
    while (socket_dir.size() > 1 && socket_dir.back() == '/') socket_dir.pop_back();

    // Block the stop signals before any thread starts, then take them with sigtimedwait.
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, nullptr);

    dp::DeviceState state(std::move(node), mode);
    if (!feature_file.empty()) dp::write_feature_file(feature_file, state.feature_labels());
    dp::PluginRunner runner(state, socket_dir, say);
    runner.start();
    std::size_t control_offset = 0;
    int code = gpulab::kExitOk;
    for (;;) {
      const timespec tick{0, 100'000'000};
      const int sig = sigtimedwait(&stop, nullptr, &tick);
      if (sig == SIGTERM || sig == SIGINT) {
        say(fmt::format("{}: shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT"));
        break;
      }
      if (runner.refused()) {
        // The API: a plugin whose registration is refused is expected to terminate.
        gpulab::print_error(kProgram, runner.refusal());
        code = gpulab::kExitCheckFailed;
        break;
      }
      if (!control_file.empty()) dp::apply_control(state, read_control_file(control_file), control_offset, say);
      if (!inventory_path.empty()) inventory.poll(state);
    }
    runner.stop();
    return code;
  });
}
