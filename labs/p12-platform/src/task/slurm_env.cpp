#include "platform/task/slurm_env.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gpulab/errors.hpp"
#include "gpulab/text.hpp"

namespace gpulab::platform::task {
namespace {

int slurm_int(const std::function<const char*(const char*)>& getenv, const char* name, int lo,
              int hi) {
  const char* v = getenv(name);
  if (v == nullptr) {
    throw UsageError(fmt::format("--slurm: {} is not set (run the rank under srun)", name));
  }
  int n = 0;
  if (!gpulab::parse_number(v, n) || n < lo || n > hi) {
    throw UsageError(
        fmt::format("--slurm: {} must be a whole number in [{}, {}], got '{}'", name, lo, hi, v));
  }
  return n;
}

}  // namespace

std::string local_address_toward(const std::string& peer) {
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);  // discard; a UDP connect() only picks the route
  if (::inet_pton(AF_INET, peer.c_str(), &to.sin_addr) != 1) {
    throw UsageError(fmt::format("'{}' is not a numeric IPv4 address", peer));
  }
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw RunError(fmt::format("socket: {}", std::strerror(errno)));
  sockaddr_in self{};
  socklen_t len = sizeof self;
  const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof to) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&self), &len) == 0;
  const int err = errno;
  ::close(fd);
  if (!ok) throw RunError(fmt::format("no route to {}: {}", peer, std::strerror(err)));
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &self.sin_addr, text, sizeof text);
  return text;
}

void apply_slurm_env(TrainOptions& o, const std::function<const char*(const char*)>& getenv) {
  if (o.rank != 0 || o.world != 1) {
    throw UsageError(
        "--slurm takes the rank and world from SLURM_PROCID and SLURM_NTASKS; drop --rank and "
        "--world");
  }
  o.world = slurm_int(getenv, "SLURM_NTASKS", 1, 256);
  o.rank = slurm_int(getenv, "SLURM_PROCID", 0, o.world - 1);
  if (o.address != kAutoAddress) return;
  const char* launch = getenv("SLURM_LAUNCH_NODE_IPADDR");
  if (launch == nullptr) {
    throw UsageError(
        "--address auto: SLURM_LAUNCH_NODE_IPADDR is not set (run the rank under srun, or give "
        "--address)");
  }
  try {
    o.address = local_address_toward(launch);
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("--address auto: SLURM_LAUNCH_NODE_IPADDR: {}", e.what()));
  } catch (const RunError& e) {
    throw RunError(fmt::format("--address auto: {}", e.what()));
  }
}

}  // namespace gpulab::platform::task
