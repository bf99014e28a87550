// A data race planted in our own code, on gRPC's server threads: the proof that
// tools/sanitizers/tsan.supp silences only what happens inside the uninstrumented gRPC
// libraries, never a race between our handlers. Built only in ThreadSanitizer presets; the
// ctest passes only when TSan reports this race (tests/p06-device-plugin/tsan/expect_race.sh).
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "api.grpc.pb.h"

namespace {

long g_register_calls = 0;  // deliberately unsynchronised: the planted race

// Its own function, so the report names it: expect_race.sh looks for this frame.
[[gnu::noinline]] void planted_race_bump_counter() { ++g_register_calls; }

class RacyRegistration final : public v1beta1::Registration::Service {
  grpc::Status Register(grpc::ServerContext*, const v1beta1::RegisterRequest*,
                        v1beta1::Empty*) override {
    planted_race_bump_counter();
    return grpc::Status::OK;
  }
};

}  // namespace

int main() {
  char dir_template[] = "/tmp/gpulab-planted-race-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (dir == nullptr) {
    std::perror("planted-race: mkdtemp");
    return 2;
  }
  const std::string address = std::string("unix://") + dir + "/race.sock";

  RacyRegistration service;
  grpc::ServerBuilder builder;
  builder.AddListeningPort(address, grpc::InsecureServerCredentials());
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    std::fprintf(stderr, "planted-race: error: cannot listen on %s\n", address.c_str());
    return 2;
  }

  // Four clients at once: the synchronous server runs their calls on different threads.
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c) {
    clients.emplace_back([&] {
      auto stub = v1beta1::Registration::NewStub(
          grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
      for (int i = 0; i < 25; ++i) {
        grpc::ClientContext ctx;
        v1beta1::RegisterRequest req;
        v1beta1::Empty resp;
        (void)stub->Register(&ctx, req, &resp);
      }
    });
  }
  for (auto& t : clients) t.join();
  server->Shutdown();
  std::printf("planted-race: %ld Register calls counted without a lock\n", g_register_calls);
  std::string sock = std::string(dir) + "/race.sock";
  unlink(sock.c_str());
  rmdir(dir);
  return 0;
}
