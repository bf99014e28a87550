#include "device_plugin/mock_kubelet.hpp"

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "api.grpc.pb.h"
#include "device_plugin/server_limits.hpp"
#include "device_plugin/status.hpp"
#include "device_plugin/unix_socket.hpp"
#include "gpulab/errors.hpp"

namespace device_plugin {
namespace {

namespace pb = ::v1beta1;
using namespace std::chrono_literals;

template <class R>
R outcome(const grpc::Status& st) {
  R r;
  r.code = static_cast<int>(st.error_code());
  r.code_name = std::string(status_name(st.error_code()));
  r.message = st.error_message();
  return r;
}

bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

// An extended resource name: "<DNS subdomain>/<name>", name at most 63
// characters of [A-Za-z0-9._-] starting and ending alphanumeric.
bool valid_resource_name(const std::string& r) {
  const auto slash = r.find('/');
  if (slash == std::string::npos || slash == 0 || r.find('/', slash + 1) != std::string::npos) return false;
  const std::string domain = r.substr(0, slash), name = r.substr(slash + 1);
  if (domain.find('.') == std::string::npos || domain.size() > 253 || domain.ends_with("kubernetes.io")) return false;
  for (char c : domain) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-')) return false;
  }
  if (name.empty() || name.size() > 63 || !alnum(name.front()) || !alnum(name.back())) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return alnum(c) || c == '.' || c == '-' || c == '_'; });
}

// The kubelet's connection to one registered plugin.
struct Conn {
  std::string resource;
  std::string endpoint;
  std::unique_ptr<pb::DevicePlugin::Stub> stub;
  bool preferred_available = false;
  std::vector<Device> devices;
  int updates = 0;
  bool connected = true;
  // Cancellation of the ListAndWatch stream, safe against the reader starting late.
  std::mutex call_mu;
  grpc::ClientContext stream_ctx;
  bool started = false;
  bool cancelled = false;
  std::thread reader;

  void cancel() {
    {
      std::lock_guard lock(call_mu);
      cancelled = true;
      if (started) stream_ctx.TryCancel();
    }
    if (reader.joinable()) reader.join();
  }
};

}  // namespace

struct MockKubelet::Impl final : pb::Registration::Service {
  explicit Impl(std::string d) : dir(std::move(d)) {}

  std::string dir;
  std::unique_ptr<grpc::Server> server;
  mutable std::mutex mu;
  std::map<std::string, std::shared_ptr<Conn>> plugins;      // by resource name
  std::vector<RegistrationRecord> regs;
  std::map<std::string, std::set<std::string>> allocated;   // the kubelet's own bookkeeping
  std::vector<std::shared_ptr<Conn>> retired;               // replaced connections, joined in stop()

  [[nodiscard]] std::string socket_path() const { return dir + "/" + std::string(kKubeletSocket); }

  grpc::Status Register(grpc::ServerContext*, const pb::RegisterRequest* req, pb::Empty*) override {
    RegistrationRecord rec{req->resource_name(), req->endpoint(), req->version(), {}};
    const grpc::Status st = check(*req);
    rec.result = outcome<CallResult>(st);
    std::shared_ptr<Conn> old;
    {
      std::lock_guard lock(mu);
      regs.push_back(rec);
      if (!st.ok()) return st;
      if (auto it = plugins.find(req->resource_name()); it != plugins.end()) old = it->second;
      auto conn = std::make_shared<Conn>();
      conn->resource = req->resource_name();
      conn->endpoint = req->endpoint();
      auto channel = grpc::CreateChannel("unix://" + dir + "/" + req->endpoint(), grpc::InsecureChannelCredentials());
      conn->stub = pb::DevicePlugin::NewStub(channel);
      plugins[conn->resource] = conn;
      if (old) retired.push_back(old);
      conn->reader = std::thread([this, conn] { read_stream(*conn); });
    }
    if (old) {
      std::lock_guard lock(old->call_mu);  // re-registration replaces the old stream
      old->cancelled = true;
      if (old->started) old->stream_ctx.TryCancel();
    }
    return grpc::Status::OK;
  }

  grpc::Status check(const pb::RegisterRequest& req) {
    if (req.version() != kApiVersion)
      return {grpc::StatusCode::INVALID_ARGUMENT,
              fmt::format("requested device plugin API version '{}' is not supported (supported: {})", req.version(),
                          kApiVersion)};
    if (!valid_resource_name(req.resource_name()))
      return {grpc::StatusCode::INVALID_ARGUMENT,
              fmt::format("invalid extended resource name '{}' (want <domain>/<name>, e.g. nvidia.com/gpu)",
                          req.resource_name())};
    if (req.endpoint().empty() || req.endpoint().find('/') != std::string::npos)
      return {grpc::StatusCode::INVALID_ARGUMENT,
              fmt::format("endpoint '{}' must be a socket file name in {}", req.endpoint(), dir)};
    std::lock_guard lock(mu);
    if (auto it = plugins.find(req.resource_name());
        it != plugins.end() && it->second->connected && it->second->endpoint != req.endpoint())
      return {grpc::StatusCode::ALREADY_EXISTS,
              fmt::format("resource {} is already registered by {}", req.resource_name(), it->second->endpoint)};
    return grpc::Status::OK;
  }

  void read_stream(Conn& c) {
    {
      pb::DevicePluginOptions opts;
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + 2s);
      if (c.stub->GetDevicePluginOptions(&ctx, pb::Empty{}, &opts).ok()) {
        std::lock_guard lock(mu);
        c.preferred_available = opts.get_preferred_allocation_available();
      }
    }
    std::unique_ptr<grpc::ClientReader<pb::ListAndWatchResponse>> reader;
    {
      std::lock_guard lock(c.call_mu);
      if (c.cancelled) return;
      reader = c.stub->ListAndWatch(&c.stream_ctx, pb::Empty{});
      c.started = true;
    }
    pb::ListAndWatchResponse resp;
    while (reader->Read(&resp)) {
      std::vector<Device> devs;
      for (const auto& d : resp.devices()) {
        Device dev;
        dev.id = d.id();
        dev.healthy = d.health() == kHealthy;
        if (d.has_topology() && d.topology().nodes_size() > 0) dev.numa_node = static_cast<int>(d.topology().nodes(0).id());
        devs.push_back(std::move(dev));
      }
      std::lock_guard lock(mu);
      c.devices = std::move(devs);
      ++c.updates;
    }
    reader->Finish();
    std::lock_guard lock(mu);
    c.connected = false;  // the plugin went away: its devices are no longer allocatable
    c.devices.clear();
  }

  std::shared_ptr<Conn> conn(const std::string& resource) const {
    std::lock_guard lock(mu);
    const auto it = plugins.find(resource);
    return it == plugins.end() ? nullptr : it->second;
  }
};

MockKubelet::MockKubelet(std::string socket_dir) : impl_(std::make_unique<Impl>(std::move(socket_dir))) {}
MockKubelet::~MockKubelet() { stop(); }

void MockKubelet::start() {
  Impl& m = *impl_;
  // Like the kubelet's device manager: a (re)starting kubelet removes every
  // socket in the directory, so plugins must notice and serve again.
  claim_socket_path(m.socket_path(), "a second kubelet?");
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(m.dir, ec)) {
    if (e.is_socket(ec)) std::filesystem::remove(e.path(), ec);
  }
  grpc::ServerBuilder b;
  b.AddListeningPort("unix://" + m.socket_path(), grpc::InsecureServerCredentials());
  apply_server_limits(b, ServerLimits{});
  b.RegisterService(&m);
  m.server = b.BuildAndStart();
  if (!m.server) throw gpulab::RunError(fmt::format("cannot serve the kubelet socket {}", m.socket_path()));
}

void MockKubelet::stop() {
  Impl& m = *impl_;
  if (!m.server) return;
  m.server->Shutdown(std::chrono::system_clock::now() + 1s);
  m.server->Wait();
  m.server.reset();
  std::vector<std::shared_ptr<Conn>> all;
  {
    std::lock_guard lock(m.mu);
    for (auto& [r, c] : m.plugins) all.push_back(c);
    for (auto& c : m.retired) all.push_back(c);
    m.plugins.clear();
    m.retired.clear();
  }
  for (auto& c : all) c->cancel();
  ::unlink(m.socket_path().c_str());
}

std::vector<RegistrationRecord> MockKubelet::registrations() const {
  std::lock_guard lock(impl_->mu);
  return impl_->regs;
}

std::vector<std::string> MockKubelet::resources() const {
  std::lock_guard lock(impl_->mu);
  std::vector<std::string> out;
  for (const auto& [r, c] : impl_->plugins) out.push_back(r);
  return out;
}

std::vector<Device> MockKubelet::devices(const std::string& resource) const {
  const auto c = impl_->conn(resource);
  if (!c) return {};
  std::lock_guard lock(impl_->mu);
  return c->devices;
}

int MockKubelet::capacity(const std::string& resource) const {
  const auto devs = devices(resource);
  return static_cast<int>(std::count_if(devs.begin(), devs.end(), [](const Device& d) { return d.healthy; }));
}

int MockKubelet::list_updates(const std::string& resource) const {
  const auto c = impl_->conn(resource);
  if (!c) return 0;
  std::lock_guard lock(impl_->mu);
  return c->updates;
}

bool MockKubelet::wait_until(const std::function<bool()>& pred, std::chrono::milliseconds timeout) const {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

bool MockKubelet::wait_for_capacity(const std::string& resource, int units, std::chrono::milliseconds timeout) const {
  return wait_until([&] { return capacity(resource) == units; }, timeout);
}

PreferredResult MockKubelet::preferred(const std::string& resource, const std::vector<std::string>& available,
                                       const std::vector<std::string>& must_include, int size) {
  const auto c = impl_->conn(resource);
  if (!c) return outcome<PreferredResult>({grpc::StatusCode::NOT_FOUND, "no plugin registered for " + resource});
  pb::PreferredAllocationRequest req;
  auto* cr = req.add_container_requests();
  for (const auto& id : available) cr->add_available_deviceids(id);
  for (const auto& id : must_include) cr->add_must_include_deviceids(id);
  cr->set_allocation_size(size);
  pb::PreferredAllocationResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 2s);
  PreferredResult r = outcome<PreferredResult>(c->stub->GetPreferredAllocation(&ctx, req, &resp));
  if (r.ok() && resp.container_responses_size() == 1) {
    for (const auto& id : resp.container_responses(0).deviceids()) r.ids.push_back(id);
  }
  return r;
}

AllocateResult MockKubelet::allocate(const std::string& resource, int count) {
  const auto c = impl_->conn(resource);
  if (!c) return outcome<AllocateResult>({grpc::StatusCode::NOT_FOUND, "no plugin registered for " + resource});
  std::vector<std::string> free;
  bool ask = false;
  {
    std::lock_guard lock(impl_->mu);
    const auto& taken = impl_->allocated[resource];
    for (const Device& d : c->devices) {
      if (d.healthy && !taken.contains(d.id)) free.push_back(d.id);
    }
    ask = c->preferred_available;
  }
  if (count < 1 || static_cast<std::size_t>(count) > free.size())
    return outcome<AllocateResult>({grpc::StatusCode::RESOURCE_EXHAUSTED,
                                    fmt::format("requested {} of {}, {} allocatable", count, resource, free.size())});
  std::vector<std::string> pick(free.begin(), free.begin() + count);
  if (ask) {
    // Only a hint: the kubelet uses it when it is a valid choice.
    const PreferredResult p = preferred(resource, free, {}, count);
    if (p.ok() && p.ids.size() == static_cast<std::size_t>(count)) pick = p.ids;
  }
  return allocate_ids(resource, pick);
}

AllocateResult MockKubelet::allocate_ids(const std::string& resource, const std::vector<std::string>& ids) {
  const auto c = impl_->conn(resource);
  if (!c) return outcome<AllocateResult>({grpc::StatusCode::NOT_FOUND, "no plugin registered for " + resource});
  pb::AllocateRequest req;
  auto* cr = req.add_container_requests();
  for (const auto& id : ids) cr->add_devices_ids(id);
  pb::AllocateResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 2s);
  AllocateResult r = outcome<AllocateResult>(c->stub->Allocate(&ctx, req, &resp));
  r.ids = ids;
  if (!r.ok()) return r;
  for (const auto& car : resp.container_responses()) {
    ContainerAllocation a;
    for (const auto& [k, v] : car.envs()) a.envs[k] = v;
    for (const auto& d : car.devices()) a.devices.push_back({d.container_path(), d.host_path(), d.permissions()});
    for (const auto& m : car.mounts()) a.mounts.push_back({m.container_path(), m.host_path(), m.read_only()});
    r.containers.push_back(std::move(a));
  }
  std::lock_guard lock(impl_->mu);
  impl_->allocated[resource].insert(ids.begin(), ids.end());
  return r;
}

void MockKubelet::release(const std::string& resource, const std::vector<std::string>& ids) {
  std::lock_guard lock(impl_->mu);
  for (const auto& id : ids) impl_->allocated[resource].erase(id);
}

}  // namespace device_plugin
