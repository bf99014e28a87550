#include "device_plugin/plugin_server.hpp"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <optional>
#include <mutex>
#include <thread>

#include "api.grpc.pb.h"
#include "device_plugin/status.hpp"
#include "device_plugin/unix_socket.hpp"
#include "gpulab/errors.hpp"

namespace device_plugin {
namespace {

namespace pb = ::v1beta1;
using namespace std::chrono_literals;

// The DevicePlugin service for one resource name.
class DevicePluginService final : public pb::DevicePlugin::Service {
 public:
  DevicePluginService(DeviceState& state, std::string resource, const std::atomic<bool>& stopping)
      : state_(state), resource_(std::move(resource)), stopping_(stopping) {}

  grpc::Status GetDevicePluginOptions(grpc::ServerContext*, const pb::Empty*, pb::DevicePluginOptions* out) override {
    out->set_pre_start_required(false);
    out->set_get_preferred_allocation_available(true);
    return grpc::Status::OK;
  }

  // The stream stays open for the plugin's lifetime; every change re-sends the full list.
  grpc::Status ListAndWatch(grpc::ServerContext* ctx, const pb::Empty*,
                            grpc::ServerWriter<pb::ListAndWatchResponse>* writer) override {
    std::uint64_t seen = state_.generation();
    if (!writer->Write(snapshot())) return grpc::Status::OK;
    while (!ctx->IsCancelled() && !stopping_) {
      if (!state_.wait_for_change(seen, 50ms)) continue;
      seen = state_.generation();
      if (!writer->Write(snapshot())) break;
    }
    return grpc::Status::OK;
  }

  grpc::Status GetPreferredAllocation(grpc::ServerContext*, const pb::PreferredAllocationRequest* req,
                                      pb::PreferredAllocationResponse* out) override {
    try {
      for (const auto& c : req->container_requests()) {
        const std::vector<std::string> avail(c.available_deviceids().begin(), c.available_deviceids().end());
        const std::vector<std::string> must(c.must_include_deviceids().begin(), c.must_include_deviceids().end());
        auto* r = out->add_container_responses();
        for (const auto& id : state_.preferred(resource_, avail, must, c.allocation_size())) r->add_deviceids(id);
      }
    } catch (const DeviceError& e) {
      return {to_grpc_code(e.code), e.what()};
    }
    return grpc::Status::OK;
  }

  grpc::Status Allocate(grpc::ServerContext*, const pb::AllocateRequest* req, pb::AllocateResponse* out) override {
    std::vector<std::vector<std::string>> containers;
    for (const auto& c : req->container_requests()) containers.emplace_back(c.devices_ids().begin(), c.devices_ids().end());
    try {
      for (const ContainerAllocation& a : state_.allocate(resource_, containers)) {
        auto* r = out->add_container_responses();
        for (const auto& [k, v] : a.envs) (*r->mutable_envs())[k] = v;
        for (const auto& d : a.devices) {
          auto* spec = r->add_devices();
          spec->set_container_path(d.container_path);
          spec->set_host_path(d.host_path);
          spec->set_permissions(d.permissions);
        }
        for (const auto& m : a.mounts) {
          auto* mount = r->add_mounts();
          mount->set_container_path(m.container_path);
          mount->set_host_path(m.host_path);
          mount->set_read_only(m.read_only);
        }
      }
    } catch (const DeviceError& e) {
      return {to_grpc_code(e.code), e.what()};
    }
    return grpc::Status::OK;
  }

  grpc::Status PreStartContainer(grpc::ServerContext*, const pb::PreStartContainerRequest*,
                                 pb::PreStartContainerResponse*) override {
    return grpc::Status::OK;  // nothing to prepare on a fake GPU; never called (pre_start_required = false)
  }

 private:
  pb::ListAndWatchResponse snapshot() const {
    pb::ListAndWatchResponse resp;
    for (const Device& d : state_.list(resource_)) {
      auto* dev = resp.add_devices();
      dev->set_id(d.id);
      dev->set_health(std::string(d.healthy ? kHealthy : kUnhealthy));
      // No topology when the NUMA node is not known (-1): the kubelet's
      // topology manager then treats the device as reachable from anywhere.
      if (d.numa_node >= 0) dev->mutable_topology()->add_nodes()->set_id(d.numa_node);
    }
    return resp;
  }

  DeviceState& state_;
  std::string resource_;
  const std::atomic<bool>& stopping_;
};

struct Served {
  std::string resource;
  std::string socket_path;
  std::unique_ptr<DevicePluginService> service;
  std::unique_ptr<grpc::Server> server;
};

// Identity of the kubelet socket file: a re-created socket has a new inode or ctime.
struct FileId {
  ino_t ino = 0;
  std::int64_t ctime_ns = 0;
  bool operator==(const FileId&) const = default;
};
std::optional<FileId> file_id(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileId{st.st_ino, static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec};
}

}  // namespace

std::string endpoint_for(const std::string& resource) {
  std::string e = resource;
  if (const auto dot = e.find(".com/"); dot != std::string::npos) e = e.substr(0, dot) + "-" + e.substr(dot + 5);
  for (char& c : e) {
    if (c == '/') c = '-';
  }
  return e + ".sock";
}

struct PluginRunner::Impl {
  Impl(DeviceState& s, std::string d, Log l, ServerLimits lim)
      : state(s), dir(std::move(d)), log(std::move(l)), limits(lim) {}
  DeviceState& state;
  std::string dir;
  Log log;
  ServerLimits limits;
  std::vector<Served> served;
  std::atomic<bool> stopping{false};
  std::atomic<int> registrations{0};
  std::atomic<bool> refused{false};
  mutable std::mutex mu;
  std::string refusal;
  std::thread watcher;
  bool started = false;

  void say(const std::string& s) const {
    if (log) log(s);
  }

  // One Register call per resource. A refusal (bad version, duplicate name) is final.
  bool register_all() {
    const std::string kubelet = dir + "/" + std::string(kKubeletSocket);
    auto channel = grpc::CreateChannel("unix://" + kubelet, grpc::InsecureChannelCredentials());
    auto stub = pb::Registration::NewStub(channel);
    for (const Served& s : served) {
      pb::RegisterRequest req;
      req.set_version(std::string(kApiVersion));
      req.set_endpoint(endpoint_for(s.resource));
      req.set_resource_name(s.resource);
      req.mutable_options()->set_get_preferred_allocation_available(true);
      pb::Empty resp;
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + 2s);
      const grpc::Status st = stub->Register(&ctx, req, &resp);
      if (st.ok()) {
        ++registrations;
        say(fmt::format("registered {} ({}) with {}", s.resource, endpoint_for(s.resource), kubelet));
        continue;
      }
      if (st.error_code() == grpc::StatusCode::UNAVAILABLE || st.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
        return false;  // the kubelet is not up (yet): try again on the next tick
      }
      std::lock_guard lock(mu);
      refusal = fmt::format("kubelet refused {}: {} ({})", s.resource, st.error_message(), status_name(st.error_code()));
      refused = true;
      say(refusal);
      return true;
    }
    return true;
  }

  // Binds (or re-binds) one resource's server to its socket.
  void open(Served& s) {
    claim_socket_path(s.socket_path, "a second gpu-device-plugin?");
    if (!s.service) s.service = std::make_unique<DevicePluginService>(state, s.resource, stopping);
    grpc::ServerBuilder b;
    b.AddListeningPort("unix://" + s.socket_path, grpc::InsecureServerCredentials());
    apply_server_limits(b, limits);
    b.RegisterService(s.service.get());
    s.server = b.BuildAndStart();
    if (!s.server) throw gpulab::RunError(fmt::format("cannot serve on {}", s.socket_path));
    say(fmt::format("serving {} on {}", s.resource, s.socket_path));
  }

  // A starting kubelet deletes every socket in its directory; serve again before registering.
  void reopen_missing() {
    for (Served& s : served) {
      if (file_id(s.socket_path)) continue;
      s.server->Shutdown(std::chrono::system_clock::now() + 1s);
      s.server->Wait();
      open(s);
    }
  }

  void watch() {
    const std::string kubelet = dir + "/" + std::string(kKubeletSocket);
    std::optional<FileId> registered_with;
    while (!stopping && !refused) {
      const auto id = file_id(kubelet);
      if (id && id != registered_with) {
        try {
          reopen_missing();
        } catch (const std::exception& e) {
          std::lock_guard lock(mu);
          refusal = e.what();
          refused = true;
          break;
        }
        if (register_all()) registered_with = id;
      } else if (!id) {
        registered_with.reset();  // the kubelet went away; register when it returns
      }
      std::this_thread::sleep_for(50ms);
    }
  }
};

PluginRunner::PluginRunner(DeviceState& state, std::string socket_dir, Log log, ServerLimits limits)
    : impl_(std::make_unique<Impl>(state, std::move(socket_dir), std::move(log), limits)) {}

PluginRunner::~PluginRunner() { stop(); }

void PluginRunner::start() {
  Impl& m = *impl_;
  for (const std::string& resource : m.state.resources()) {
    Served s;
    s.resource = resource;
    s.socket_path = m.dir + "/" + endpoint_for(resource);
    m.open(s);
    m.served.push_back(std::move(s));
  }
  m.started = true;
  m.watcher = std::thread([&m] { m.watch(); });
}

void PluginRunner::stop() {
  Impl& m = *impl_;
  if (!m.started) return;
  m.started = false;
  m.stopping = true;
  if (m.watcher.joinable()) m.watcher.join();
  for (Served& s : m.served) {
    s.server->Shutdown(std::chrono::system_clock::now() + 2s);
    s.server->Wait();
    ::unlink(s.socket_path.c_str());
  }
  m.served.clear();
}

int PluginRunner::registrations() const { return impl_->registrations; }
bool PluginRunner::refused() const { return impl_->refused; }
std::string PluginRunner::refusal() const {
  std::lock_guard lock(impl_->mu);
  return impl_->refusal;
}

}  // namespace device_plugin
