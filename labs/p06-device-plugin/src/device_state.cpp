#include "device_plugin/device_state.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "device_plugin/inventory_node.hpp"
#include "gpulab/errors.hpp"
#include "gpulab/inventory/device_access.hpp"

namespace device_plugin {
namespace {

constexpr std::string_view kGpuResource = "nvidia.com/gpu";

bool parse_int(std::string_view s, int& out) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && p == s.data() + s.size() && !s.empty();
}

[[noreturn]] void fail(ErrorCode c, const std::string& what) { throw DeviceError(c, what); }

// --inventory: what the platform's agent gives a task on these devices (of
// one backend: one resource is one backend), its visible-devices variable and
// device files, from the functions the agent uses.
ContainerAllocation agent_allocation(const NodeConfig& cfg, const std::vector<int>& devices) {
  namespace inv = gpulab::inventory;
  ContainerAllocation a;
  std::vector<std::string> ordinals;
  std::string variable;
  for (const int i : devices) {
    const inv::Accelerator& g = cfg.gpu(i);
    const int ordinal = inv::backend_ordinal(g.id);
    variable = inv::visible_devices_variable(g.backend);
    ordinals.push_back(std::to_string(ordinal));
    for (const auto& f : inv::device_files(g.backend, ordinal)) {
      if (std::none_of(a.devices.begin(), a.devices.end(),
                       [&](const DeviceNodeSpec& d) { return d.host_path == f; }))
        a.devices.push_back({f, f, "rw"});
    }
  }
  if (!variable.empty()) a.envs[variable] = fmt::format("{}", fmt::join(ordinals, ","));
  return a;
}

}  // namespace

std::string_view mode_name(Mode m) {
  switch (m) {
    case Mode::kWhole: return "whole";
    case Mode::kTimeslice: return "timeslice";
    case Mode::kMig: return "mig";
    case Mode::kMps: return "mps";
  }
  return "?";
}

Mode parse_mode(std::string_view name) {
  for (Mode m : {Mode::kWhole, Mode::kTimeslice, Mode::kMig, Mode::kMps}) {
    if (mode_name(m) == name) return m;
  }
  throw gpulab::UsageError(fmt::format("unknown mode '{}' (use whole, timeslice, mig or mps)", name));
}

std::pair<std::string, int> split_replica_id(std::string_view id) {
  const auto sep = id.rfind("::");
  if (sep == std::string_view::npos) return {std::string(id), -1};
  int r = -1;
  if (!parse_int(id.substr(sep + 2), r)) r = -2;  // present but not a number
  return {std::string(id.substr(0, sep)), r};
}

DeviceState::DeviceState(NodeConfig cfg, Mode mode) : cfg_(std::move(cfg)), mode_(mode) {
  if (cfg_.gpu_count() == 0) throw gpulab::UsageError("the node has no GPUs");
  mig_.resize(cfg_.gpu_count());
  for (const auto& g : cfg_.inventory.accelerators)
    health_.push_back(g.health);  // healthy unless an inventory says
  if (cfg_.from_inventory && mode_ != Mode::kWhole)
    throw gpulab::UsageError(fmt::format(
        "--inventory serves whole HAL devices; --mode {} needs --config", mode_name(mode_)));
}

std::string DeviceState::resource_of_gpu(const gpulab::inventory::Accelerator& g) const {
  return cfg_.from_inventory ? inventory_resource(g.backend) : std::string(kGpuResource);
}

std::string DeviceState::resource_of_profile(std::string_view profile) const {
  if (cfg_.mig.strategy == "single") return std::string(kGpuResource);
  return fmt::format("nvidia.com/mig-{}", profile);
}

std::vector<std::string> DeviceState::resources() const {
  if (cfg_.from_inventory) {
    std::vector<std::string> out;  // one per backend, in the inventory's order
    for (const auto& g : cfg_.inventory.accelerators) {
      std::string r = resource_of_gpu(g);
      if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(std::move(r));
    }
    return out;
  }
  if (mode_ != Mode::kMig) return {std::string(kGpuResource)};
  std::vector<std::string> out;
  const auto& names = cfg_.mig.dynamic ? cfg_.mig.profiles : cfg_.mig.layout;
  for (const auto& p : names) {
    std::string r = resource_of_profile(p);
    if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(std::move(r));
  }
  return out;
}

bool DeviceState::is_resource(std::string_view resource) const {
  const auto rs = resources();
  return std::find(rs.begin(), rs.end(), resource) != rs.end();
}

std::vector<Device> DeviceState::list(std::string_view resource) const {
  std::lock_guard lock(mu_);
  return list_locked(resource);
}

std::vector<Device> DeviceState::list_locked(std::string_view resource) const {
  std::vector<Device> out;
  if (!is_resource(resource)) return out;
  for (const gpulab::inventory::Accelerator& g : cfg_.inventory.accelerators) {
    const bool healthy = health_[static_cast<std::size_t>(g.index)].healthy;
    auto add = [&](std::string id) {
      out.push_back({std::move(id), healthy, g.index, g.domain.numa_node});
    };
    switch (mode_) {
      case Mode::kWhole:
        if (resource_of_gpu(g) == resource) add(g.id);
        break;
      case Mode::kTimeslice:
      case Mode::kMps:
        for (int r = 0; r < replicas(); ++r) add(fmt::format("{}::{}", g.id, r));
        break;
      case Mode::kMig:
        if (!cfg_.mig.dynamic) {
          MigGpu layout;
          for (const auto& name : cfg_.mig.layout) {
            const MigProfile* p = find_profile(name);
            layout.place_anywhere(*p);
            if (resource_of_profile(name) == resource)
              add(fmt::format("MIG-{}-{}", g.index, layout.instances().back().start));
          }
        } else {
          const MigGpu& gpu = mig_[static_cast<std::size_t>(g.index)];
          for (const auto& name : cfg_.mig.profiles) {
            if (resource_of_profile(name) != resource) continue;
            const MigProfile& p = *find_profile(name);
            // Instances already created for pods, then as many more as still fit.
            std::vector<int> starts;
            for (const MigInstance& i : gpu.instances()) {
              if (i.profile == &p) starts.push_back(i.start);
            }
            for (int s : gpu.packing(p)) starts.push_back(s);
            std::sort(starts.begin(), starts.end());
            for (int s : starts) add(fmt::format("MIG-{}-{}-{}", g.index, name, s));
          }
        }
        break;
    }
  }
  return out;
}

DeviceState::Parsed DeviceState::parse_id(std::string_view resource, const std::string& id) const {
  if (!is_resource(resource)) fail(ErrorCode::kNotFound, fmt::format("this plugin does not serve resource '{}'", resource));
  auto unknown = [&]() -> Parsed {
    fail(ErrorCode::kNotFound, fmt::format("unknown device '{}' for resource {}", id, resource));
  };
  auto gpu_by_uuid = [&](const std::string& uuid) {
    const gpulab::inventory::Accelerator* g = cfg_.inventory.find(uuid);
    return g == nullptr ? -1 : g->index;
  };
  Parsed p;
  switch (mode_) {
    case Mode::kWhole:
      p.gpu = gpu_by_uuid(id);
      if (p.gpu < 0 || resource_of_gpu(cfg_.gpu(p.gpu)) != resource) return unknown();
      return p;
    case Mode::kTimeslice:
    case Mode::kMps: {
      const int n = replicas();
      const auto [uuid, replica] = split_replica_id(id);
      p.gpu = gpu_by_uuid(uuid);
      if (p.gpu < 0) return unknown();
      if (replica == -1)
        fail(ErrorCode::kInvalidArgument,
             fmt::format("'{}' is a GPU, not a replica: {} IDs are {}::<0-{}>", id,
                         mode_ == Mode::kMps ? "MPS" : "time-sliced", uuid, n - 1));
      if (replica < 0 || replica >= n)
        fail(ErrorCode::kInvalidArgument, fmt::format("'{}' asks for replica {} but {} has {} replicas (0-{})", id,
                                                      id.substr(id.rfind("::") + 2), uuid, n, n - 1));
      p.replica = replica;
      return p;
    }
    case Mode::kMig: {
      // MIG-<gpu>-<start> (static layout) or MIG-<gpu>-<profile>-<start> (dynamic).
      if (!id.starts_with("MIG-")) return unknown();
      std::vector<std::string_view> parts;
      std::string_view rest = std::string_view(id).substr(4);
      for (std::size_t pos; (pos = rest.find('-')) != std::string_view::npos; rest.remove_prefix(pos + 1))
        parts.push_back(rest.substr(0, pos));
      parts.push_back(rest);
      const std::size_t want = cfg_.mig.dynamic ? 3 : 2;
      if (parts.size() != want || !parse_int(parts.front(), p.gpu) || !parse_int(parts.back(), p.start))
        return unknown();
      if (p.gpu < 0 || p.gpu >= static_cast<int>(cfg_.gpu_count())) return unknown();
      if (cfg_.mig.dynamic) {
        p.profile = find_profile(parts[1]);
        if (p.profile == nullptr ||
            std::find(cfg_.mig.profiles.begin(), cfg_.mig.profiles.end(), parts[1]) == cfg_.mig.profiles.end())
          return unknown();
        if (std::find(p.profile->starts.begin(), p.profile->starts.end(), p.start) == p.profile->starts.end())
          return unknown();
      } else {
        MigGpu layout;
        for (const auto& name : cfg_.mig.layout) {
          layout.place_anywhere(*find_profile(name));
          if (layout.instances().back().start == p.start) p.profile = find_profile(name);
        }
        if (p.profile == nullptr) return unknown();
      }
      if (resource_of_profile(p.profile->name) != resource) return unknown();
      return p;
    }
  }
  return unknown();
}

std::vector<ContainerAllocation> DeviceState::allocate(std::string_view resource,
                                                       const std::vector<std::vector<std::string>>& containers) {
  std::lock_guard lock(mu_);
  if (containers.empty()) fail(ErrorCode::kInvalidArgument, "AllocateRequest has no container requests");
  // Validate everything first: a pod gets all its devices or none.
  std::vector<MigGpu> trial = mig_;
  std::set<std::string> taking;
  std::vector<std::vector<Parsed>> parsed;
  for (const auto& ids : containers) {
    if (ids.empty()) fail(ErrorCode::kInvalidArgument, "a container request lists no devices");
    auto& row = parsed.emplace_back();
    for (const std::string& id : ids) {
      const Parsed p = parse_id(resource, id);
      if (const auto& h = health_[static_cast<std::size_t>(p.gpu)]; !h.healthy)
        fail(ErrorCode::kFailedPrecondition,
             fmt::format("device '{}' is unhealthy ({} had {})", id, cfg_.gpu(p.gpu).id, h.reason));
      if (allocated_.contains(id)) fail(ErrorCode::kAlreadyExists, fmt::format("device '{}' is already allocated", id));
      if (!taking.insert(id).second)
        fail(ErrorCode::kInvalidArgument, fmt::format("device '{}' is requested twice", id));
      if (cfg_.mig.dynamic && mode_ == Mode::kMig &&
          !trial[static_cast<std::size_t>(p.gpu)].place(*p.profile, p.start))
        fail(ErrorCode::kFailedPrecondition,
             fmt::format("device '{}' no longer fits: its slices on GPU {} are taken by another MIG instance", id, p.gpu));
      if (mode_ == Mode::kMps)
        for (const Parsed& q : row)
          if (q.gpu == p.gpu)
            fail(ErrorCode::kInvalidArgument,
                 fmt::format("'{}' is a second MPS replica of {} for one container: an MPS client gets one share of a "
                             "GPU ({}% of its threads), so request replicas of different GPUs",
                             id, cfg_.gpu(p.gpu).id, 100 / replicas()));
      row.push_back(p);
    }
  }
  std::vector<ContainerAllocation> out;
  for (std::size_t c = 0; c < containers.size(); ++c) {
    if (cfg_.from_inventory) {
      std::vector<int> devices;
      for (const Parsed& p : parsed[c]) devices.push_back(p.gpu);
      out.push_back(agent_allocation(cfg_, devices));
      continue;
    }
    ContainerAllocation a;
    std::vector<std::string> visible;
    std::vector<int> gpus;
    for (std::size_t k = 0; k < containers[c].size(); ++k) {
      const Parsed& p = parsed[c][k];
      const std::string& uuid = cfg_.gpu(p.gpu).id;
      // Time-slice replicas resolve to their physical GPU: that is all the container can see.
      std::string name = mode_ == Mode::kMig ? fmt::format("MIG-{}/{}/0", uuid, p.start) : uuid;
      if (std::find(visible.begin(), visible.end(), name) == visible.end()) visible.push_back(std::move(name));
      if (std::find(gpus.begin(), gpus.end(), p.gpu) == gpus.end()) gpus.push_back(p.gpu);
      // NVIDIA's "volume-mounts" device-list strategy: one /dev/null mount per device ID.
      a.mounts.push_back({fmt::format("/var/run/nvidia-container-devices/{}", containers[c][k]), "/dev/null", true});
    }
    std::string env;
    for (const auto& v : visible) env += (env.empty() ? "" : ",") + v;
    a.envs["NVIDIA_VISIBLE_DEVICES"] = env;
    bool nvidia_nodes = false;
    for (int gi : gpus) {
      const GpuPaths& g = cfg_.paths[static_cast<std::size_t>(gi)];
      a.devices.push_back({g.container_path, g.device_node, "rw"});
      nvidia_nodes = nvidia_nodes || g.device_node.starts_with("/dev/nvidia");
    }
    if (nvidia_nodes) {
      // The control nodes every CUDA process opens (Phase 04): without them the GPU is unreachable.
      for (const char* n : {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"}) a.devices.push_back({n, n, "rw"});
    }
    if (mode_ == Mode::kMps) {
      // A client reaches the GPU only through the MPS server: its pipe directory
      // and the shared memory the server uses, both from the host.
      const MpsDaemon d = mps();
      a.envs["CUDA_MPS_PIPE_DIRECTORY"] = d.pipe_dir;
      a.mounts.push_back({d.pipe_dir, d.host_pipe_dir, false});
      a.mounts.push_back({"/dev/shm", d.host_shm_dir, false});
      // The daemon's default limits, spelled out for the client too. Device
      // ordinals are the container's: its first visible GPU is 0.
      a.envs["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = std::to_string(d.active_thread_percentage);
      std::string limits;
      for (std::size_t k = 0; k < gpus.size(); ++k)
        limits += fmt::format("{}{}={}M", k == 0 ? "" : ",", k, d.pinned_limit_mib[static_cast<std::size_t>(gpus[k])]);
      a.envs["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] = limits;
    }
    out.push_back(std::move(a));
  }
  allocated_.insert(taking.begin(), taking.end());
  if (cfg_.mig.dynamic && mode_ == Mode::kMig) {
    mig_ = std::move(trial);
    bump();  // the other profiles' capacity just changed
  }
  return out;
}

std::vector<std::string> DeviceState::preferred(std::string_view resource, const std::vector<std::string>& available,
                                                const std::vector<std::string>& must_include, int size) const {
  std::lock_guard lock(mu_);
  if (size < 1) fail(ErrorCode::kInvalidArgument, "allocation_size must be >= 1");
  if (static_cast<std::size_t>(size) > available.size())
    fail(ErrorCode::kInvalidArgument, fmt::format("allocation_size {} exceeds the {} available devices", size, available.size()));
  if (must_include.size() > static_cast<std::size_t>(size))
    fail(ErrorCode::kInvalidArgument, "more must-include devices than allocation_size");
  std::map<std::string, int> gpu_of;
  for (const auto& id : available) gpu_of[id] = parse_id(resource, id).gpu;
  auto peers = [&](int a, int b) { return a != b && cfg_.nvlinked(a, b); };
  std::vector<std::string> chosen;
  for (const auto& id : must_include) {
    if (!gpu_of.contains(id)) fail(ErrorCode::kInvalidArgument, fmt::format("must-include device '{}' is not available", id));
    if (std::find(chosen.begin(), chosen.end(), id) == chosen.end()) chosen.push_back(id);
  }
  while (chosen.size() < static_cast<std::size_t>(size)) {
    std::string best;
    int best_score = -1000;
    for (const auto& [id, gpu] : gpu_of) {
      if (std::find(chosen.begin(), chosen.end(), id) != chosen.end()) continue;
      int score = 0;
      bool same_gpu = false;
      for (const auto& c : chosen) {
        if (peers(gpu, gpu_of[c])) score += 4;        // joins a chosen GPU over NVLink
        if (gpu == gpu_of[c]) same_gpu = true;
      }
      if (same_gpu) score -= 2;                       // replicas: spread over GPUs first
      const bool last = chosen.size() + 1 == static_cast<std::size_t>(size);
      for (const auto& [other, og] : gpu_of) {
        if (og != gpu && peers(gpu, og) && std::find(chosen.begin(), chosen.end(), other) == chosen.end()) {
          // Its NVLink peer is free: good if the pair can form inside this request,
          // bad if it is the last pick (it would break a pair a later pod could use).
          score += last ? -1 : 1;
          break;
        }
      }
      // Ties: lowest GPU, then lowest ID (gpu_of iterates IDs in order).
      if (score > best_score || (score == best_score && gpu < gpu_of[best])) {
        best = id;
        best_score = score;
      }
    }
    chosen.push_back(best);
  }
  return chosen;
}

bool DeviceState::release(const std::string& id) {
  std::lock_guard lock(mu_);
  if (allocated_.erase(id) == 0) return false;
  if (mode_ == Mode::kMig && cfg_.mig.dynamic) {
    // Destroy the instance so its slices go back to every profile.
    for (const std::string& r : resources()) {
      try {
        const Parsed p = parse_id(r, id);
        mig_[static_cast<std::size_t>(p.gpu)].remove(p.start);
        break;
      } catch (const DeviceError&) {
      }
    }
    bump();
  }
  return true;
}

bool DeviceState::mark_unhealthy(int gpu, int xid) {
  std::lock_guard lock(mu_);
  if (gpu < 0 || gpu >= static_cast<int>(cfg_.gpu_count())) return false;
  auto& h = health_[static_cast<std::size_t>(gpu)];
  const bool was_healthy = h.healthy;
  h = gpulab::inventory::Health::unhealthy(
      gpulab::inventory::xid_reason(static_cast<unsigned>(xid)));
  if (was_healthy) bump();  // a second Xid changes the reason, not what is advertised
  return true;
}

bool DeviceState::mark_healthy(int gpu) {
  std::lock_guard lock(mu_);
  if (gpu < 0 || gpu >= static_cast<int>(cfg_.gpu_count())) return false;
  auto& h = health_[static_cast<std::size_t>(gpu)];
  if (!h.healthy) {
    h = gpulab::inventory::Health::ok();
    bump();
  }
  return true;
}

bool DeviceState::set_health(const std::vector<gpulab::inventory::Health>& health) {
  std::lock_guard lock(mu_);
  if (health.size() != health_.size()) return false;
  bool advertised = false, changed = false;
  for (std::size_t i = 0; i < health.size(); ++i) {
    if (health_[i] == health[i]) continue;
    changed = true;
    advertised = advertised || health_[i].healthy != health[i].healthy;
    health_[i] = health[i];
  }
  if (advertised) bump();  // a new reason alone changes nothing the kubelet sees
  return changed;
}

void DeviceState::bump() {
  ++generation_;
  changed_.notify_all();
}

std::uint64_t DeviceState::generation() const {
  std::lock_guard lock(mu_);
  return generation_;
}

bool DeviceState::wait_for_change(std::uint64_t seen, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return changed_.wait_for(lock, timeout, [&] { return generation_ != seen; });
}

std::string DeviceState::isolation() const {
  if (cfg_.from_inventory)
    return "per backend: a cuda or fakegpu device is dedicated; HAL CPU devices (cpu_ref, fast, "
           "blas, opencl) share the "
           "host's cores and memory";
  switch (mode_) {
    case Mode::kWhole: return "STRONG (dedicated physical devices)";
    case Mode::kTimeslice: return "NONE (replicas share memory + faults — WARMUP Ch. 4)";
    case Mode::kMig: return "STRONG (hardware-partitioned instance)";
    case Mode::kMps:
      return fmt::format("WEAK (clients share one MPS server: {}% of the threads and a pinned memory limit each, "
                         "but one client's fatal fault ends every client's work)",
                         100 / replicas());
  }
  return "";
}

int DeviceState::replicas() const {
  switch (mode_) {
    case Mode::kTimeslice: return cfg_.replicas;
    case Mode::kMps: return cfg_.mps_replicas;
    case Mode::kWhole:
    case Mode::kMig: break;
  }
  return 1;
}

MpsDaemon DeviceState::mps() const {
  std::vector<std::uint64_t> memory;
  for (const auto& g : cfg_.inventory.accelerators) memory.push_back(g.memory_bytes);
  return mps_daemon(std::string(kGpuResource), memory, cfg_.mps_replicas);
}

gpulab::inventory::NodeInventory DeviceState::inventory() const {
  namespace inv = gpulab::inventory;
  std::lock_guard lock(mu_);
  inv::NodeInventory out = cfg_.inventory;
  for (inv::Accelerator& g : out.accelerators) {
    const auto i = static_cast<std::size_t>(g.index);
    g.health = health_[i];
    // A MIG instance owns its memory slices' share of the GPU's memory.
    auto add_mig = [&](std::string id, const MigProfile& p) {
      g.partitions.push_back(
          {std::move(id), inv::PartitionKind::kMig, std::string(p.name),
           g.memory_bytes / MigGpu::kMemorySlices * static_cast<std::uint64_t>(p.memory_slices)});
    };
    if (mode_ == Mode::kTimeslice) {
      for (int r = 0; r < cfg_.replicas; ++r)
        g.partitions.push_back(
            {fmt::format("{}::{}", g.id, r), inv::PartitionKind::kTimeSlice, "", g.memory_bytes});
    } else if (mode_ == Mode::kMig && !cfg_.mig.dynamic) {
      MigGpu layout;
      for (const auto& name : cfg_.mig.layout) {
        layout.place_anywhere(*find_profile(name));
        add_mig(fmt::format("MIG-{}-{}", g.index, layout.instances().back().start),
                *find_profile(name));
      }
    } else if (mode_ == Mode::kMig) {
      // Only instances that exist: the advertised candidates overlap each other.
      for (const MigInstance& m : mig_[i].instances())
        add_mig(fmt::format("MIG-{}-{}-{}", g.index, m.profile->name, m.start), *m.profile);
    }
  }
  return out;
}

std::map<std::string, std::string> DeviceState::feature_labels() const {
  std::map<std::string, std::string> l;
  if (cfg_.from_inventory) {
    // The nvidia.com labels describe one GPU product; a HAL node has a count per backend.
    std::map<std::string, int> per_backend;
    for (const auto& g : cfg_.inventory.accelerators) ++per_backend[g.backend];
    for (const auto& [backend, n] : per_backend)
      l[fmt::format("{}/{}.count", kInventoryResourceDomain, backend)] = std::to_string(n);
    l[fmt::format("{}/device.count", kInventoryResourceDomain)] = std::to_string(cfg_.gpu_count());
    return l;
  }
  l["nvidia.com/gpu.product"] = cfg_.product();
  l["nvidia.com/gpu.memory"] =
      std::to_string(cfg_.memory_bytes() >> 20);  // MiB, as gpu-feature-discovery writes it
  l["nvidia.com/gpu.count"] = std::to_string(cfg_.gpu_count());
  l["nvidia.com/gpu.replicas"] = std::to_string(replicas());
  l["nvidia.com/gpu.sharing-strategy"] =
      mode_ == Mode::kTimeslice ? "time-slicing" : mode_ == Mode::kMps ? "mps" : "none";
  l["nvidia.com/mig.strategy"] = mode_ == Mode::kMig ? cfg_.mig.strategy : "none";
  return l;
}

}  // namespace device_plugin
