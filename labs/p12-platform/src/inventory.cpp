#include "platform/inventory.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "conformance/session.hpp"
#include "gpulab/errors.hpp"
#include "gpulab/inventory/device_access.hpp"
#include "hal/hal.hpp"
#include "platform/job_spec.hpp"

namespace platform {
namespace {

namespace inv = gpulab::inventory;

std::uint64_t host_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return std::uint64_t{1} << 30;  // not reported: 1 GiB, a placeholder
  return std::min(static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page), inv::kMaxMemoryBytes);
}

std::string_view vendor_of(std::string_view backend) {
  if (backend == "cuda") return "nvidia";
  if (backend == "opencl") return "opencl";  // whichever ICD is installed; the HAL does not say
  return "cpu";
}

// An island name as --devices may give it: what the inventory allows in
// domain.island, and nothing a shell or a URL would mangle.
bool valid_island(std::string_view s) {
  return !s.empty() && s.size() <= 63 && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
           c == '.';
  });
}

}  // namespace

Device hal_device(std::string_view backend, int backend_ordinal, int node_ordinal, std::string island) {
  Device d;
  d.id = fmt::format("{}:{}", backend, backend_ordinal);
  d.index = node_ordinal;
  d.vendor = vendor_of(backend);
  d.backend = backend;
  d.model = fmt::format("HAL {} backend", backend);
  d.memory_bytes = host_memory_bytes();
  d.domain.island = std::move(island);
  return d;
}

int backend_ordinal(const Device& d) {
  return inv::backend_ordinal(d.id);
}

inv::NodeInventory node_inventory(std::string_view node, const std::vector<Device>& devices) {
  inv::NodeInventory out;
  out.node = std::string(node);
  out.accelerators.assign(devices.begin(), devices.end());  // the shared part; dtypes stay here
  return out;
}

void link_devices(std::vector<Device>& devices) {
  for (auto& d : devices) {
    d.links.clear();
    for (const auto& peer : devices) {
      if (peer.id == d.id) continue;
      if (peer.domain.island == d.domain.island) {
        d.links.push_back(inv::Link{peer.id, inv::LinkKind::kNvlink, kIslandLinkGbps, kIslandLinkUs});
      } else {
        d.links.push_back(inv::Link{peer.id, inv::LinkKind::kPcie, kHostLinkGbps, kHostLinkUs});
      }
    }
    d.links.push_back(inv::Link{std::string(inv::kHostPeer), inv::LinkKind::kPcie, kHostLinkGbps, kHostLinkUs});
    d.links.push_back(
        inv::Link{std::string(inv::kNetworkPeer), inv::LinkKind::kEthernet, kNetworkLinkGbps, kNetworkLinkUs});
  }
}

std::vector<Device> parse_device_spec(std::string_view spec) {
  std::vector<Device> out;
  std::set<std::string> seen;
  std::size_t pos = 0;
  while (pos <= spec.size()) {
    const auto comma = spec.find(',', pos);
    auto item = spec.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    pos = comma == std::string_view::npos ? spec.size() + 1 : comma + 1;
    std::string island;
    if (const auto at = item.find('@'); at != std::string_view::npos) {
      island = std::string(item.substr(at + 1));
      item = item.substr(0, at);
      if (!valid_island(island)) {
        throw gpulab::UsageError(fmt::format(
            "--devices '{}': island '{}' must be 1-63 letters, digits, '-', '_' or '.'", spec, island));
      }
    }
    const auto colon = item.find(':');
    const std::string backend(item.substr(0, colon));
    int count = 1;
    if (colon != std::string_view::npos) {
      const std::string n(item.substr(colon + 1));
      try {
        std::size_t used = 0;
        count = std::stoi(n, &used);
        if (used != n.size()) throw std::invalid_argument(n);
      } catch (const std::exception&) {
        throw gpulab::UsageError(fmt::format("--devices '{}': '{}' is not a count", spec, n));
      }
    }
    if (backend.empty() || backend == "auto" ||
        std::find(std::begin(kBackendNames), std::end(kBackendNames), backend) == std::end(kBackendNames)) {
      throw gpulab::UsageError(
          fmt::format("--devices '{}': unknown backend '{}' (cpu_ref, fast, blas, opencl, cuda)", spec, backend));
    }
    if (count < 1 || count > 16) throw gpulab::UsageError(fmt::format("--devices '{}': 1-16 devices per backend", spec));
    if (!seen.insert(backend).second) throw gpulab::UsageError(fmt::format("--devices '{}': {} twice", spec, backend));
    for (int i = 0; i < count; ++i) out.push_back(hal_device(backend, i, static_cast<int>(out.size()), island));
  }
  link_devices(out);
  return out;
}

std::vector<Device> discover_devices() {
  gpulab::hal::Registry reg(gpulab::hal::DiscoveryOptions::from_environment());
  std::vector<Device> out;
  for (const auto& b : reg.backends()) {
    const std::string name(b->name());
    if (std::find(std::begin(kBackendNames), std::end(kBackendNames), name) == std::end(kBackendNames)) continue;
    Device d = hal_device(name, 0, static_cast<int>(out.size()));
    if (const std::string line = b->device(); !line.empty()) d.model = line;
    out.push_back(std::move(d));
  }
  link_devices(out);
  return out;
}

std::vector<Certification> certify(std::vector<Device>& devices) {
  std::set<std::string> backends;
  for (const auto& d : devices) backends.insert(d.backend);
  std::vector<Certification> out;
  // One session per backend: a name the HAL cannot load must not cost the others.
  for (const auto& name : backends) {
    Certification c{name, false, false, "not loaded by the HAL here"};
    conformance::SessionOptions opts;
    opts.only = {name};
    opts.matrix.ops = {conformance::Op::kMatmul};
    opts.matrix.dtypes = {conformance::DType::kF32};
    opts.perf = false;
    try {
      const auto report = conformance::run_session(opts);
      for (const auto& br : report.backends) {
        if (br.info.name != name) continue;
        c.loaded = true;
        const auto* cell = br.cell(conformance::Op::kMatmul, conformance::DType::kF32);
        if (!br.available()) {
          c.detail = br.info.unavailable;
        } else if (cell == nullptr || cell->verdict != conformance::Verdict::kPass) {
          c.detail = cell ? fmt::format("F32 matmul {} ({}/{} cases)", conformance::name_of(cell->verdict),
                                        cell->passed, cell->total)
                          : "F32 matmul not declared";
        } else {
          c.certified = true;
          c.detail = fmt::format("F32 matmul PASS ({}/{} cases)", cell->passed, cell->total);
        }
      }
      for (const auto& r : report.rejected) {
        if (r.name == name) c.detail = "rejected by the HAL: " + r.reason;
      }
    } catch (const std::exception& e) {
      c.detail = e.what();
    }
    out.push_back(std::move(c));
  }
  for (auto& d : devices) {
    const auto it = std::find_if(out.begin(), out.end(), [&](const Certification& c) { return c.backend == d.backend; });
    d.dtypes.clear();
    if (it != out.end() && it->certified) d.dtypes.emplace_back("f32");
  }
  return out;
}

}  // namespace platform
