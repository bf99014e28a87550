// The plugin's gRPC server against hostile clients (issue #24: the exporter's
// rules for every server): an oversized request is refused and the server
// keeps serving; a connection that never speaks HTTP/2 is closed from accept.
#include <gtest/gtest.h>
#include <grpcpp/grpcpp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api.grpc.pb.h"
#include "device_plugin/mock_kubelet.hpp"
#include "device_plugin/plugin_server.hpp"
#include "device_plugin/walkthrough.hpp"

namespace dp = device_plugin;
namespace pb = ::v1beta1;
using namespace std::chrono_literals;

namespace {

struct Served {
  dp::TempDir dir;
  dp::MockKubelet kubelet{dir.path()};
  dp::DeviceState state{dp::default_node(), dp::Mode::kWhole};
  dp::PluginRunner plugin;
  explicit Served(dp::ServerLimits limits = {}) : plugin(state, dir.path(), {}, limits) {
    kubelet.start();
    plugin.start();
  }
  ~Served() {
    plugin.stop();
    kubelet.stop();
  }
  [[nodiscard]] std::string socket() const { return dir.path() + "/nvidia-gpu.sock"; }
};

grpc::Status allocate(pb::DevicePlugin::Stub& stub, const std::vector<std::string>& ids) {
  pb::AllocateRequest req;
  auto* c = req.add_container_requests();
  for (const auto& id : ids) c->add_devices_ids(id);
  pb::AllocateResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 30s);
  return stub.Allocate(&ctx, req, &resp);
}

TEST(GrpcLimits, AnOversizedRequestIsRefusedAndTheServerKeepsServing) {
  Served s;
  ASSERT_TRUE(s.kubelet.wait_for_capacity("nvidia.com/gpu", 4, 10s));
  auto stub = pb::DevicePlugin::NewStub(
      grpc::CreateChannel("unix://" + s.socket(), grpc::InsecureChannelCredentials()));
  // 1 MiB of device ids: four times the 256 KiB a request may have (gRPC's default is 4 MiB).
  const std::vector<std::string> huge(32 * 1024, std::string(28, 'x'));
  const grpc::Status refused = allocate(*stub, huge);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  // The same connection, and the kubelet's own, still get answers.
  const grpc::Status ok = allocate(*stub, {"GPU-0"});
  EXPECT_TRUE(ok.ok()) << ok.error_message();
  const auto a = s.kubelet.allocate_ids("nvidia.com/gpu", {"GPU-1"});
  EXPECT_TRUE(a.ok()) << a.message;
}

TEST(GrpcLimits, AConnectionThatNeverSpeaksIsClosedFromAccept) {
  dp::ServerLimits limits;
  limits.handshake_timeout = 500ms;  // gRPC's default is 120 s
  Served s(limits);
  ASSERT_TRUE(s.kubelet.wait_for_capacity("nvidia.com/gpu", 4, 10s));
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, s.socket().c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr), 0) << std::strerror(errno);
  // Send nothing; the server must hang up (EOF or a reset) well within this generous deadline.
  bool closed = false;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (!closed && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 1000) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    closed = n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN);
  }
  ::close(fd);
  EXPECT_TRUE(closed) << "a silent connection was still open after 60 s";
  const auto a = s.kubelet.allocate_ids("nvidia.com/gpu", {"GPU-2"});
  EXPECT_TRUE(a.ok()) << a.message;
}

// Each ListAndWatch holds a server thread for its lifetime. Without a thread
// cap a client opening streams got a thread each; with one, the streams past
// it are refused, and once they go the server answers again.
TEST(GrpcLimits, StreamsPastTheThreadCapAreRefusedAndServingResumes) {
  dp::ServerLimits limits;
  limits.max_threads = 8;
  Served s(limits);
  ASSERT_TRUE(s.kubelet.wait_for_capacity("nvidia.com/gpu", 4, 10s));
  constexpr int kStreams = 24;
  struct Stream {
    std::unique_ptr<pb::DevicePlugin::Stub> stub;
    grpc::ClientContext ctx;
    std::unique_ptr<grpc::ClientReader<pb::ListAndWatchResponse>> reader;
  };
  std::vector<std::unique_ptr<Stream>> streams;
  int served = 0, refused = 0;
  for (int i = 0; i < kStreams; ++i) {
    auto st = std::make_unique<Stream>();
    grpc::ChannelArguments args;
    args.SetInt("gpulab.test.connection", i);  // a connection of its own, not a shared one
    st->stub = pb::DevicePlugin::NewStub(grpc::CreateCustomChannel(
        "unix://" + s.socket(), grpc::InsecureChannelCredentials(), args));
    st->ctx.set_deadline(std::chrono::system_clock::now() + 60s);
    st->reader = st->stub->ListAndWatch(&st->ctx, pb::Empty());
    pb::ListAndWatchResponse first;
    if (st->reader->Read(&first)) {
      ++served;
      streams.push_back(std::move(st));  // held open
    } else {
      const grpc::Status status = st->reader->Finish();
      EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
      ++refused;
    }
  }
  EXPECT_GT(served, 0);
  EXPECT_GT(refused, 0) << "all " << kStreams << " streams got a thread of their own";
  for (auto& st : streams) st->ctx.TryCancel();
  for (auto& st : streams) (void)st->reader->Finish();
  streams.clear();
  // Serving resumes once the streams are gone (their threads return within a tick).
  auto stub = pb::DevicePlugin::NewStub(
      grpc::CreateChannel("unix://" + s.socket(), grpc::InsecureChannelCredentials()));
  grpc::Status last;
  for (const auto end = std::chrono::steady_clock::now() + 60s; std::chrono::steady_clock::now() < end;) {
    last = allocate(*stub, {"GPU-3"});
    if (last.ok()) break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(last.ok()) << last.error_message();
}

}  // namespace
