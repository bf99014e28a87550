// Ranks on separate hosts, on one machine: each rank in a network namespace of
// its own (`ip netns add`), so its traffic leaves through that namespace's own
// interfaces — what the wrong-NIC drill needs, where which veth carries the
// bytes is the point. setns(CLONE_NEWNET) needs root (CAP_SYS_ADMIN).
#pragma once

#include <string>

namespace ring {

// "/run/netns/<name>" for a bare name (what `ip netns add` creates), else the path as given.
std::string netns_path(const std::string& name);

// Moves the calling thread into namespace `name` until destroyed: the
// launcher's seat while it opens a rank's listening socket there (a socket
// stays in the namespace it was created in).
class NetnsSeat {
 public:
  explicit NetnsSeat(const std::string& name);
  ~NetnsSeat();
  NetnsSeat(const NetnsSeat&) = delete;
  NetnsSeat& operator=(const NetnsSeat&) = delete;

 private:
  int home_ = -1;
};

// Moves the calling thread for good (a forked rank, before it connects).
// Throws std::runtime_error naming the namespace and why.
void enter_netns(const std::string& name);

}  // namespace ring
