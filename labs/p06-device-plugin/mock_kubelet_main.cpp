// mock-kubelet: serves the kubelet's Registration API on DIR/kubelet.sock,
// connects back to each plugin that registers, and prints what it sees —
// registrations, capacity per resource, and (with --allocate) one pod's
// allocation made the way the kubelet makes it.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>

#include "device_plugin/mock_kubelet.hpp"
#include "gpulab/cli.hpp"
#include "gpulab/flag_checks.hpp"
#include "gpulab/json.hpp"
#include "gpulab/table.hpp"

namespace dp = device_plugin;
using namespace std::chrono_literals;

int main(int argc, char** argv) {
  CLI::App app{"Mock kubelet: serves Registration on DIR/kubelet.sock, consumes each plugin's ListAndWatch,\n"
               "and allocates like the kubelet's device manager. Exits after --allocate, or after --timeout."};
  gpulab::CommonOptions common;
  gpulab::add_json_flag(app, common);
  std::string dir;
  std::string resource = "nvidia.com/gpu";
  int allocate = 0;
  double timeout = 10;
  app.add_option("--socket-dir", dir, "Directory for kubelet.sock (the plugins' --socket-dir)")->required();
  app.add_option("--resource", resource, "Resource to wait for and allocate from")->capture_default_str();
  app.add_option("--allocate", allocate, "Allocate this many units for one pod, print the response, exit")
      ->check(CLI::Range(0, 1024));
  app.add_option("--timeout", timeout, "Seconds to wait for the plugin, 0.1..3600")->capture_default_str()->check(gpulab::finite_in(0.1, 3600));

  return gpulab::run_program("mock-kubelet", app, argc, argv, [&]() -> int {
    if (!std::filesystem::is_directory(dir))
      throw gpulab::UsageError(fmt::format("--socket-dir {} is not a directory", dir));
    dp::MockKubelet k(dir);
    k.start();
    const auto limit = std::chrono::milliseconds(static_cast<long>(timeout * 1000));
    if (!k.wait_until([&] { return k.capacity(resource) > 0; }, limit)) {
      k.stop();
      throw gpulab::RunError(fmt::format("no plugin advertised {} within {} s", resource, timeout));
    }
    gpulab::Json doc = {{"registrations", gpulab::Json::array()}};
    gpulab::Table regs;
    regs.column("resource", gpulab::Table::Align::kLeft).column("endpoint", gpulab::Table::Align::kLeft)
        .column("version", gpulab::Table::Align::kLeft).column("result", gpulab::Table::Align::kLeft)
        .column("capacity");
    for (const auto& r : k.registrations()) {
      regs.row({r.resource, r.endpoint, r.version, r.result.code_name, std::to_string(k.capacity(r.resource))});
      doc["registrations"].push_back({{"resource", r.resource}, {"endpoint", r.endpoint}, {"version", r.version},
                                      {"result", r.result.code_name}, {"capacity", k.capacity(r.resource)}});
    }
    std::string text = regs.render();
    int code = gpulab::kExitOk;
    if (allocate > 0) {
      const dp::AllocateResult a = k.allocate(resource, allocate);
      doc["allocate"] = {{"resource", resource}, {"ids", a.ids}, {"status", a.code_name}, {"message", a.message}};
      if (a.ok()) {
        text += fmt::format("allocate {} x {} -> [{}]\n", allocate, resource, fmt::join(a.ids, " "));
        for (const auto& [key, v] : a.containers.at(0).envs) {
          text += fmt::format("  env    {}={}\n", key, v);
          doc["allocate"]["envs"][key] = v;
        }
        for (const auto& d : a.containers.at(0).devices) {
          text += fmt::format("  device {} ({})\n", d.host_path, d.permissions);
          doc["allocate"]["devices"].push_back(d.host_path);
          doc["allocate"]["device_specs"].push_back(
              {{"container_path", d.container_path}, {"host_path", d.host_path}, {"permissions", d.permissions}});
        }
        for (const auto& m : a.containers.at(0).mounts) {
          text += fmt::format("  mount  {} <- {}{}\n", m.container_path, m.host_path, m.read_only ? " (ro)" : "");
          doc["allocate"]["mounts"].push_back(m.container_path);
        }
      } else {
        text += fmt::format("allocate {} x {} -> {}: {}\n", allocate, resource, a.code_name, a.message);
        code = gpulab::kExitCheckFailed;
      }
    }
    k.stop();
    if (common.json) {
      gpulab::print_json(doc);
    } else {
      fmt::print("{}", text);
    }
    return code;
  });
}
