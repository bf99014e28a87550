// Which ranks may share memory, decided the way NCCL decides between its SHM
// and socket transports: by comparing host identities exchanged at the
// rendezvous. Two ranks can map the same memfd and wait on the same futex
// only when they run on one kernel (the boot id and hostname), can find each
// other's /proc entries (the pid namespace) and are in one network namespace
// (the platform runs ranks of "other hosts" in other network namespaces of
// this machine, and those must stay on TCP like real remote hosts).
#pragma once

#include <string>

namespace ring {

// "boot=<boot id> host=<hostname> net:[<inode>] pid:[<inode>]";
// when any part cannot be read, "unknown host (pid N)", which same_host()
// matches with nothing, so an unreadable /proc means TCP, not a wrong guess.
std::string host_identity();

// True when `a` and `b` name the same host, kernel and namespaces.
bool same_host(const std::string& a, const std::string& b);

}  // namespace ring
