#include "device_plugin/node_config.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "device_plugin/mig.hpp"
#include "gpulab/errors.hpp"
#include "gpulab/file.hpp"

namespace device_plugin {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& source, const std::string& what) {
  throw gpulab::UsageError(fmt::format("{}: {}", source, what));
}

template <class T>
T get(const json& j, const char* key, const T& fallback, const std::string& source) {
  if (!j.contains(key)) return fallback;
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    bad(source, fmt::format("'{}' has the wrong type", key));
  }
}

void validate_layout(const std::vector<std::string>& layout, const std::string& source) {
  MigGpu gpu;
  for (const std::string& name : layout) {
    const MigProfile* p = find_profile(name);
    if (p == nullptr) bad(source, fmt::format("mig.layout: unknown MIG profile '{}'", name));
    if (!gpu.place_anywhere(*p))
      bad(source, fmt::format("mig.layout: '{}' does not fit after the instances before it", name));
  }
}

namespace inv = gpulab::inventory;

inv::Accelerator make_gpu(int index, std::string uuid, int numa_node, const std::string& product,
                          int memory_gb, const std::string& backend) {
  inv::Accelerator a;
  a.id = std::move(uuid);
  a.index = index;
  a.vendor = backend == "fakegpu" ? "gpulab" : "nvidia";
  a.backend = backend;
  a.model = product;
  a.memory_bytes = static_cast<std::uint64_t>(memory_gb) << 30;
  a.domain.numa_node = numa_node;
  return a;
}

// An NVLink link each way; a pair given twice is still one bridge.
void wire(NodeConfig& n, int a, int b) {
  auto& ga = n.inventory.accelerators[static_cast<std::size_t>(a)];
  auto& gb = n.inventory.accelerators[static_cast<std::size_t>(b)];
  if (n.nvlinked(a, b)) return;
  ga.links.push_back({gb.id, inv::LinkKind::kNvlink, kNvlinkGbps, 0});
  gb.links.push_back({ga.id, inv::LinkKind::kNvlink, kNvlinkGbps, 0});
}

}  // namespace

bool NodeConfig::nvlinked(int a, int b) const {
  const inv::Link* l = gpu(a).link_to(gpu(b).id);
  return l != nullptr && l->kind == inv::LinkKind::kNvlink;
}

NodeConfig default_node() {
  NodeConfig n;
  n.inventory.node = "gpu-node";
  for (int i = 0; i < 4; ++i) {
    const std::string node = fmt::format("/dev/nvidia{}", i);
    n.inventory.accelerators.push_back(
        make_gpu(i, fmt::format("GPU-{}", i), i / 2, "NVIDIA-H100-80GB-HBM3", 80, "cuda"));
    n.paths.push_back({node, node});
  }
  wire(n, 0, 1);
  wire(n, 2, 3);
  n.mig.layout = std::vector<std::string>(7, "1g.10gb");
  return n;
}

NodeConfig parse_node_config(const std::string& json_text, const std::string& source) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::parse_error& e) {
    bad(source, fmt::format("not valid JSON (byte {})", e.byte));
  }
  if (!j.is_object()) bad(source, "the node config must be a JSON object");
  NodeConfig n;
  n.inventory.node = get<std::string>(j, "node", "gpu-node", source);
  const auto product = get<std::string>(j, "product", "NVIDIA-H100-80GB-HBM3", source);
  const int memory_gb = get<int>(j, "memory_gb", 80, source);
  if (memory_gb <= 0) bad(source, "'memory_gb' must be > 0");
  if (memory_gb > 65536) bad(source, "'memory_gb' must be at most 65536 (it is in GB)");
  if (product.empty()) bad(source, "'product' must not be empty");
  const auto backend = get<std::string>(j, "backend", "cuda", source);
  if (backend != "cuda" && backend != "fakegpu")
    bad(source, fmt::format("'backend' must be 'cuda' or 'fakegpu', got '{}'", backend));

  if (!j.contains("gpus")) bad(source, "'gpus' is missing (a count, or a list of {\"uuid\", \"device_node\"})");
  const json& gj = j.at("gpus");
  auto& gpus = n.inventory.accelerators;
  if (gj.is_number_integer()) {
    const int count = gj.get<int>();
    if (count < 1 || count > 64) bad(source, "'gpus' must be between 1 and 64");
    for (int i = 0; i < count; ++i) {
      const std::string node = fmt::format("/dev/nvidia{}", i);
      gpus.push_back(make_gpu(i, fmt::format("GPU-{}", i), 0, product, memory_gb, backend));
      n.paths.push_back({node, node});
    }
  } else if (gj.is_array() && !gj.empty() && gj.size() <= 64) {
    for (std::size_t i = 0; i < gj.size(); ++i) {
      const json& g = gj[i];
      if (!g.is_object()) bad(source, fmt::format("gpus[{}] must be an object", i));
      const int idx = static_cast<int>(i);
      const auto uuid = get<std::string>(g, "uuid", fmt::format("GPU-{}", i), source);
      GpuPaths paths{get<std::string>(g, "device_node", fmt::format("/dev/nvidia{}", i), source),
                     ""};
      const int numa_node = get<int>(g, "numa_node", 0, source);
      if (uuid.empty() || uuid.size() > 40 || uuid.find("::") != std::string::npos ||
          uuid.find(',') != std::string::npos)
        bad(source, fmt::format("gpus[{}].uuid must be 1-40 characters without '::' or ','", i));
      if (paths.device_node.empty() || paths.device_node.front() != '/')
        bad(source, fmt::format("gpus[{}].device_node must be an absolute path", i));
      paths.container_path = get<std::string>(g, "container_path", paths.device_node, source);
      if (!paths.container_path.starts_with("/dev/"))
        bad(source, fmt::format("gpus[{}].container_path must be under /dev/ (give one when device_node is not)", i));
      if (n.inventory.find(uuid) != nullptr)
        bad(source, fmt::format("gpus[{}].uuid '{}' is a duplicate", i, uuid));
      gpus.push_back(make_gpu(idx, uuid, numa_node, product, memory_gb, backend));
      n.paths.push_back(std::move(paths));
    }
  } else {
    bad(source, "'gpus' must be a count (1-64) or a non-empty list of at most 64 GPUs");
  }

  if (j.contains("timeslice")) {
    n.replicas = get<int>(j.at("timeslice"), "replicas", n.replicas, source);
    if (n.replicas < 1 || n.replicas > 64) bad(source, "'timeslice.replicas' must be between 1 and 64");
  }

  if (j.contains("mps")) {
    n.mps_replicas = get<int>(j.at("mps"), "replicas", n.mps_replicas, source);
    if (n.mps_replicas < 1 || n.mps_replicas > 64) bad(source, "'mps.replicas' must be between 1 and 64");
  }

  const int count = static_cast<int>(n.gpu_count());
  if (j.contains("nvlink_pairs")) {
    const json& pj = j.at("nvlink_pairs");
    if (!pj.is_array()) bad(source, "'nvlink_pairs' must be a list of [a, b] GPU index pairs");
    for (const json& p : pj) {
      if (!p.is_array() || p.size() != 2 || !p[0].is_number_integer() || !p[1].is_number_integer())
        bad(source, "'nvlink_pairs' must be a list of [a, b] GPU index pairs");
      const int a = p[0].get<int>(), b = p[1].get<int>();
      if (a < 0 || b < 0 || a >= count || b >= count || a == b)
        bad(source, fmt::format("nvlink pair [{}, {}] names a GPU that does not exist", a, b));
      wire(n, a, b);
    }
  } else {
    for (int i = 0; i + 1 < count; i += 2) wire(n, i, i + 1);
  }

  n.mig.layout = std::vector<std::string>(7, "1g.10gb");
  if (j.contains("mig")) {
    const json& m = j.at("mig");
    if (!m.is_object()) bad(source, "'mig' must be an object");
    n.mig.strategy = get<std::string>(m, "strategy", n.mig.strategy, source);
    if (n.mig.strategy != "single" && n.mig.strategy != "mixed")
      bad(source, fmt::format("mig.strategy must be 'single' or 'mixed', got '{}'", n.mig.strategy));
    n.mig.dynamic = get<bool>(m, "dynamic", false, source);
    if (n.mig.dynamic) {
      n.mig.layout.clear();
      n.mig.profiles = get<std::vector<std::string>>(m, "profiles", {"1g.10gb", "2g.20gb", "3g.40gb"}, source);
      if (n.mig.strategy != "mixed") bad(source, "dynamic MIG needs mig.strategy 'mixed' (one resource per profile)");
      if (n.mig.profiles.empty()) bad(source, "mig.profiles must not be empty");
      for (const auto& p : n.mig.profiles) {
        if (find_profile(p) == nullptr) bad(source, fmt::format("mig.profiles: unknown MIG profile '{}'", p));
      }
    } else {
      n.mig.layout = get<std::vector<std::string>>(m, "layout", n.mig.layout, source);
      if (n.mig.layout.empty()) bad(source, "mig.layout must list at least one instance");
      validate_layout(n.mig.layout, source);
      if (n.mig.strategy == "single") {
        for (const auto& p : n.mig.layout) {
          if (p != n.mig.layout.front())
            bad(source, "mig.strategy 'single' needs one MIG profile on the node (more than one MIG device type present)");
        }
      }
    }
  }
  // What the plugin-specific checks above do not cover (a '/' in a UUID, a
  // negative NUMA node) the shared model catches, naming its field.
  if (const auto problems = inv::validate(n.inventory); !problems.empty())
    bad(source, problems.front());
  return n;
}

NodeConfig load_node_config(const std::string& path) {
  auto text = gpulab::read_text_file(path, kMaxNodeConfigBytes);
  if (!text) throw gpulab::UsageError(fmt::format("node config: {}", text.error().message));
  return parse_node_config(text.value(), path);
}

}  // namespace device_plugin
