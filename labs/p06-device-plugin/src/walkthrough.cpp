#include "device_plugin/walkthrough.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "device_plugin/control.hpp"
#include "device_plugin/mock_kubelet.hpp"
#include "device_plugin/plugin_server.hpp"
#include "gpulab/errors.hpp"
#include "gpulab/table.hpp"

namespace device_plugin {
namespace {

using namespace std::chrono_literals;
using gpulab::Json;

std::string joined(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// A plugin and a mock kubelet talking over real sockets in a fresh directory.
struct Harness {
  TempDir dir;
  MockKubelet kubelet{dir.path()};
  DeviceState state;
  PluginRunner plugin{state, dir.path()};

  Harness(NodeConfig cfg, Mode mode) : state(std::move(cfg), mode) {
    kubelet.start();
    plugin.start();
    for (const auto& r : state.resources()) {
      const int units = static_cast<int>(state.list(r).size());
      if (!kubelet.wait_for_capacity(r, units, 10s))
        throw gpulab::RunError(fmt::format("the mock kubelet never saw {} units of {} (registered: {})", units, r,
                                           plugin.registrations()));
    }
  }
  ~Harness() {
    plugin.stop();
    kubelet.stop();
  }
};

std::string visible(const AllocateResult& a) {
  if (!a.ok()) throw gpulab::RunError(fmt::format("Allocate [{}] failed: {} {}", joined(a.ids, " "), a.code_name, a.message));
  return a.containers.at(0).envs.at("NVIDIA_VISIBLE_DEVICES");
}

}  // namespace

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/gpulab-dp-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) throw gpulab::RunError(fmt::format("cannot create a directory like {}", tmpl));
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

DemoReport walkthrough() {
  DemoReport rep;
  rep.json = {{"modes", Json::array()}};
  const NodeConfig node = default_node();
  const int gpus = static_cast<int>(node.gpu_count());
  struct Step {
    Mode mode;
    std::vector<std::string> ids;
    std::string note;
  };
  const std::vector<Step> steps{
      {Mode::kWhole, {"GPU-0", "GPU-1"}, fmt::format("({} physical GPUs)", gpus)},
      {Mode::kTimeslice, {"GPU-0::3"}, fmt::format("({} GPUs x {} replicas)", gpus, node.replicas)},
      {Mode::kMig, {"MIG-0-2"}, fmt::format("({} GPUs x {} instances)", gpus, node.mig.layout.size())},
  };
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    Harness h(node, s.mode);
    const std::string resource = h.state.resources().front();
    const int units = h.kubelet.capacity(resource);
    const AllocateResult a = h.kubelet.allocate_ids(resource, s.ids);
    const std::string env = visible(a);
    std::string text = fmt::format("mode={:<12}resource={:<21} advertised units={:<3} {}\n", mode_name(s.mode),
                                   resource, units, s.note);
    const std::string head = fmt::format("  allocate [{}] -> ", joined(s.ids, " "));
    text += head + "env NVIDIA_VISIBLE_DEVICES=" + env;
    Json mode_json = {{"mode", mode_name(s.mode)}, {"resource", resource}, {"advertised_units", units},
                      {"allocate", s.ids},         {"NVIDIA_VISIBLE_DEVICES", env}};
    if (s.mode == Mode::kTimeslice) {
      // The claim in the note is checked: another replica of the same GPU sees the same device.
      const auto [gpu, replica] = split_replica_id(s.ids.front());
      const std::string other = visible(h.kubelet.allocate_ids(resource, {gpu + "::1"}));
      const bool same = other == env;
      rep.passed = rep.passed && same;
      text += fmt::format("  (replica {} shares {}!)", replica, env);
      if (!same) text += fmt::format("\n  FAIL replica 1 of {} sees '{}', not '{}'", gpu, other, env);
      mode_json["replica_1_NVIDIA_VISIBLE_DEVICES"] = other;
    }
    text += "\n";
    if (s.mode == Mode::kWhole) {
      std::vector<std::string> nodes;
      for (const auto& d : a.containers.at(0).devices) {
        if (d.host_path.starts_with("/dev/nvidia") && std::isdigit(static_cast<unsigned char>(d.host_path.back())))
          nodes.push_back(d.host_path);
      }
      text += std::string(head.size(), ' ') + "devices " + joined(nodes, " ") + "\n";
    }
    Json devs = Json::array();
    for (const auto& d : a.containers.at(0).devices) devs.push_back(d.host_path);
    mode_json["devices"] = devs;
    mode_json["isolation"] = h.state.isolation();
    text += "  isolation: " + h.state.isolation() + "\n";
    rep.text += (i > 0 ? "\n" : "") + text;
    rep.json["modes"].push_back(mode_json);
  }
  return rep;
}

DemoReport extensions() {
  DemoReport rep;
  auto check = [&rep](bool ok, const std::string& what) {
    rep.passed = rep.passed && ok;
    rep.text += fmt::format("  {} {}\n", ok ? "PASS" : "FAIL", what);
    rep.json["checks"].push_back({{"pass", ok}, {"check", what}});
  };
  rep.json["checks"] = Json::array();

  // 1. MIG geometry: 1g/2g/3g advertised from the same slices, recomputed after each allocation.
  {
    NodeConfig node = default_node();
    node.mig.layout.clear();
    node.mig.dynamic = true;
    node.mig.profiles = {"1g.10gb", "2g.20gb", "3g.40gb"};
    Harness h(node, Mode::kMig);
    const auto resources = h.state.resources();
    gpulab::Table t;
    t.column("step", gpulab::Table::Align::kLeft);
    for (const auto& r : resources) t.column(r.substr(std::string("nvidia.com/").size()));
    Json rows = Json::array();
    auto row = [&](const std::string& step) {
      std::vector<std::string> cells{step};
      Json j = {{"step", step}};
      // Wait for the re-advertisement to reach the kubelet before reading capacity.
      h.kubelet.wait_until(
          [&] {
            for (const auto& r : resources) {
              if (h.kubelet.capacity(r) != static_cast<int>(h.state.list(r).size())) return false;
            }
            return true;
          },
          5s);
      for (const auto& r : resources) {
        cells.push_back(std::to_string(h.kubelet.capacity(r)));
        j[r] = h.kubelet.capacity(r);
      }
      t.row(cells);
      rows.push_back(j);
    };
    row("fresh node (4 GPUs)");
    visible(h.kubelet.allocate_ids("nvidia.com/mig-3g.40gb", {"MIG-0-3g.40gb-0"}));
    row("allocate MIG-0-3g.40gb-0");
    int gpu0_1g = 0;
    for (const Device& d : h.kubelet.devices("nvidia.com/mig-1g.10gb")) gpu0_1g += d.id.starts_with("MIG-0-") ? 1 : 0;
    visible(h.kubelet.allocate_ids("nvidia.com/mig-1g.10gb", {"MIG-1-1g.10gb-0"}));
    row("allocate MIG-1-1g.10gb-0");
    const AllocateResult clash = h.kubelet.allocate_ids("nvidia.com/mig-2g.20gb", {"MIG-1-2g.20gb-0"});
    std::size_t off = 0;
    apply_control(h.state, "release MIG-0-3g.40gb-0\n", off, [](const std::string&) {});
    h.kubelet.release("nvidia.com/mig-3g.40gb", {"MIG-0-3g.40gb-0"});
    row("release MIG-0-3g.40gb-0");
    rep.text += "== Extension 1: MIG geometry (mixed strategy, instances created on demand) ==\n" + t.render();
    check(gpu0_1g == 3, fmt::format("after a 3g.40gb on GPU 0, GPU 0 advertises {} 1g.10gb instances (slices 4-6), not 4",
                                    gpu0_1g));
    check(!clash.ok() && clash.code_name == "FAILED_PRECONDITION",
          fmt::format("MIG-1-2g.20gb-0 overlaps the 1g on GPU 1's slice 0: {} {}", clash.code_name, clash.message));
    rep.json["mig_geometry"] = rows;
  }

  // 2. Health: an Xid marks a GPU unhealthy; ListAndWatch re-sends; allocation stops.
  {
    Harness h(default_node(), Mode::kWhole);
    const std::string r = "nvidia.com/gpu";
    gpulab::Table t;
    t.column("event", gpulab::Table::Align::kLeft).column("capacity").column("ListAndWatch msgs");
    auto row = [&](const std::string& ev, int want) {
      h.kubelet.wait_for_capacity(r, want, 5s);
      t.row({ev, std::to_string(h.kubelet.capacity(r)), std::to_string(h.kubelet.list_updates(r))});
    };
    row("registered", 4);
    std::size_t off = 0;
    std::string control = "xid 1 79\n";
    apply_control(h.state, control, off, [](const std::string&) {});
    row("xid 1 79 (control channel)", 3);
    const AllocateResult sick = h.kubelet.allocate_ids(r, {"GPU-1"});
    const AllocateResult four = h.kubelet.allocate(r, 4);
    control += "recover 1\n";
    apply_control(h.state, control, off, [](const std::string&) {});
    row("recover 1", 4);
    rep.text += "\n== Extension 2: health transitions ==\n" + t.render();
    check(sick.code_name == "FAILED_PRECONDITION",
          fmt::format("Allocate [GPU-1] refused while unhealthy: {} {}", sick.code_name, sick.message));
    check(four.code_name == "RESOURCE_EXHAUSTED",
          fmt::format("the kubelet stops scheduling onto it: a 4-GPU pod gets {} ({})", four.code_name, four.message));
  }

  // 3. Feature discovery labels.
  {
    DeviceState st(default_node(), Mode::kTimeslice);
    rep.text += "\n== Extension 3: gpu-feature-discovery labels (--feature-file) ==\n";
    for (const auto& [k, v] : st.feature_labels()) {
      rep.text += fmt::format("  {}={}\n", k, v);
      rep.json["labels"][k] = v;
    }
  }

  // 4. Preferred allocation over NVLink pairs {0,1} and {2,3}.
  {
    Harness h(default_node(), Mode::kWhole);
    const std::string r = "nvidia.com/gpu";
    const PreferredResult a = h.kubelet.preferred(r, {"GPU-0", "GPU-2", "GPU-3"}, {}, 2);
    const PreferredResult b = h.kubelet.preferred(r, {"GPU-0", "GPU-1", "GPU-2", "GPU-3"}, {"GPU-3"}, 2);
    const AllocateResult pod = h.kubelet.allocate(r, 2);
    rep.text += "\n== Extension 4: GetPreferredAllocation (NVLink pairs GPU-0/1, GPU-2/3) ==\n";
    rep.text += fmt::format("  {:<42} -> [{}]\n", "available [GPU-0 GPU-2 GPU-3], size 2", joined(a.ids, " "));
    rep.text += fmt::format("  {:<42} -> [{}]\n", "available all, must include GPU-3, size 2", joined(b.ids, " "));
    rep.text += fmt::format("  {:<42} -> NVIDIA_VISIBLE_DEVICES={}\n", "kubelet allocates a 2-GPU pod", visible(pod));
    check(a.ids == std::vector<std::string>{"GPU-2", "GPU-3"}, "an NVLink pair beats the lone GPU-0");
    check(b.ids == std::vector<std::string>{"GPU-3", "GPU-2"}, "must-include GPU-3 brings its NVLink peer GPU-2");
  }

  // 5. MPS: replicas of each GPU whose clients share one MPS server.
  {
    Harness h(default_node(), Mode::kMps);
    const std::string r = "nvidia.com/gpu";
    const MpsDaemon d = h.state.mps();
    const AllocateResult a = h.kubelet.allocate_ids(r, {"GPU-0::1"});
    const AllocateResult b = h.kubelet.allocate_ids(r, {"GPU-0::2"});
    const AllocateResult twice = h.kubelet.allocate_ids(r, {"GPU-1::0", "GPU-1::1"});
    const std::string env = visible(a);
    const auto& c = a.containers.at(0);
    rep.text += fmt::format("\n== Extension 5: MPS (--mode mps: {} replicas per GPU, clients share one MPS server) ==\n",
                            h.state.replicas());
    rep.text += fmt::format("  daemon: nvidia-smi -c EXCLUSIVE_PROCESS; CUDA_MPS_PIPE_DIRECTORY={} "
                            "CUDA_MPS_LOG_DIRECTORY={}\n",
                            d.host_pipe_dir, d.host_log_dir);
    for (const auto& cmd : d.control_commands()) rep.text += fmt::format("          {}\n", cmd);
    rep.text += fmt::format("  resource={} advertised units={}\n", r, h.kubelet.capacity(r));
    const std::string head = "  allocate [GPU-0::1] -> ";
    const std::string pad(head.size(), ' ');
    rep.text += fmt::format("{}env NVIDIA_VISIBLE_DEVICES={}\n", head, env);
    for (const char* k : {"CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"})
      rep.text += fmt::format("{}env {}={}\n", pad, k, c.envs.at(k));
    Json mounts = Json::array();
    for (const auto& m : c.mounts) {
      if (m.host_path.starts_with(kMpsHostRoot)) {
        rep.text += fmt::format("{}mount {} <- {}\n", pad, m.container_path, m.host_path);
        mounts.push_back({{"container_path", m.container_path}, {"host_path", m.host_path}});
      }
    }
    rep.text += "  isolation: " + h.state.isolation() + "\n";
    check(visible(b) == env && b.containers.at(0).envs.at("CUDA_MPS_PIPE_DIRECTORY") == c.envs.at("CUDA_MPS_PIPE_DIRECTORY"),
          fmt::format("replicas 1 and 2 of GPU-0 reach the same GPU through the same MPS server ({})", env));
    check(twice.code_name == "INVALID_ARGUMENT",
          fmt::format("two replicas of one GPU for one container are refused: {}", twice.code_name));
    Json envs;
    for (const auto& [k, v] : c.envs) envs[k] = v;
    rep.json["mps"] = {{"replicas", h.state.replicas()},
                       {"advertised_units", h.kubelet.capacity(r)},
                       {"daemon_commands", d.control_commands()},
                       {"host_pipe_dir", d.host_pipe_dir},
                       {"host_log_dir", d.host_log_dir},
                       {"envs", envs},
                       {"mounts", mounts},
                       {"isolation", h.state.isolation()}};
  }
  return rep;
}

}  // namespace device_plugin
