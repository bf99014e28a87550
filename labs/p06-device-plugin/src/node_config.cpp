#include "device_plugin/node_config.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "device_plugin/mig.hpp"
#include "gpulab/cli.hpp"

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

}  // namespace

NodeConfig default_node() {
  NodeConfig n;
  for (int i = 0; i < 4; ++i) {
    const std::string node = fmt::format("/dev/nvidia{}", i);
    n.gpus.push_back({i, fmt::format("GPU-{}", i), node, i / 2, node});
  }
  n.nvlink_pairs = {{0, 1}, {2, 3}};
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
  n.product = get<std::string>(j, "product", n.product, source);
  n.memory_gb = get<int>(j, "memory_gb", n.memory_gb, source);
  if (n.memory_gb <= 0) bad(source, "'memory_gb' must be > 0");
  if (n.product.empty()) bad(source, "'product' must not be empty");

  if (!j.contains("gpus")) bad(source, "'gpus' is missing (a count, or a list of {\"uuid\", \"device_node\"})");
  const json& gj = j.at("gpus");
  if (gj.is_number_integer()) {
    const int count = gj.get<int>();
    if (count < 1 || count > 64) bad(source, "'gpus' must be between 1 and 64");
    for (int i = 0; i < count; ++i) {
      const std::string node = fmt::format("/dev/nvidia{}", i);
      n.gpus.push_back({i, fmt::format("GPU-{}", i), node, 0, node});
    }
  } else if (gj.is_array() && !gj.empty() && gj.size() <= 64) {
    for (std::size_t i = 0; i < gj.size(); ++i) {
      const json& g = gj[i];
      if (!g.is_object()) bad(source, fmt::format("gpus[{}] must be an object", i));
      const int idx = static_cast<int>(i);
      GpuInfo info{idx, get<std::string>(g, "uuid", fmt::format("GPU-{}", i), source),
                   get<std::string>(g, "device_node", fmt::format("/dev/nvidia{}", i), source),
                   get<int>(g, "numa_node", 0, source), ""};
      if (info.uuid.empty() || info.uuid.size() > 40 || info.uuid.find("::") != std::string::npos ||
          info.uuid.find(',') != std::string::npos)
        bad(source, fmt::format("gpus[{}].uuid must be 1-40 characters without '::' or ','", i));
      if (info.device_node.empty() || info.device_node.front() != '/')
        bad(source, fmt::format("gpus[{}].device_node must be an absolute path", i));
      info.container_path = get<std::string>(g, "container_path", info.device_node, source);
      if (!info.container_path.starts_with("/dev/"))
        bad(source, fmt::format("gpus[{}].container_path must be under /dev/ (give one when device_node is not)", i));
      for (const GpuInfo& other : n.gpus) {
        if (other.uuid == info.uuid) bad(source, fmt::format("gpus[{}].uuid '{}' is a duplicate", i, info.uuid));
      }
      n.gpus.push_back(std::move(info));
    }
  } else {
    bad(source, "'gpus' must be a count (1-64) or a non-empty list of at most 64 GPUs");
  }

  if (j.contains("timeslice")) {
    n.replicas = get<int>(j.at("timeslice"), "replicas", n.replicas, source);
    if (n.replicas < 1 || n.replicas > 64) bad(source, "'timeslice.replicas' must be between 1 and 64");
  }

  const int count = static_cast<int>(n.gpus.size());
  if (j.contains("nvlink_pairs")) {
    const json& pj = j.at("nvlink_pairs");
    if (!pj.is_array()) bad(source, "'nvlink_pairs' must be a list of [a, b] GPU index pairs");
    for (const json& p : pj) {
      if (!p.is_array() || p.size() != 2 || !p[0].is_number_integer() || !p[1].is_number_integer())
        bad(source, "'nvlink_pairs' must be a list of [a, b] GPU index pairs");
      const int a = p[0].get<int>(), b = p[1].get<int>();
      if (a < 0 || b < 0 || a >= count || b >= count || a == b)
        bad(source, fmt::format("nvlink pair [{}, {}] names a GPU that does not exist", a, b));
      n.nvlink_pairs.emplace_back(a, b);
    }
  } else {
    for (int i = 0; i + 1 < count; i += 2) n.nvlink_pairs.emplace_back(i, i + 1);
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
  return n;
}

NodeConfig load_node_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw gpulab::UsageError(fmt::format("cannot open node config '{}'", path));
  std::stringstream buf;
  buf << in.rdbuf();
  return parse_node_config(buf.str(), path);
}

}  // namespace device_plugin
