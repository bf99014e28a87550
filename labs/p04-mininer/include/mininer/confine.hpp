// What `mininer run --confine` takes away from the container's root before it
// runs the command: the capabilities Docker's default profile does not grant,
// new privileges (setuid binaries, file capabilities), and the system calls a
// container has no business making (kernel modules, mounts, new namespaces,
// kexec, BPF, keyrings ...), refused with EPERM by a seccomp filter. Root in
// the container stays root for its own files; it can no longer reconfigure
// the kernel it shares with the host.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace mininer {

// Docker's default capability set (moby's oci/caps/defaults.go): CHOWN,
// DAC_OVERRIDE, FOWNER, FSETID, KILL, SETGID, SETUID, SETPCAP,
// NET_BIND_SERVICE, NET_RAW, SYS_CHROOT, MKNOD, AUDIT_WRITE, SETFCAP, as a
// CapEff bit mask (/proc/PID/status prints it as 00000000a80425fb).
inline constexpr std::uint64_t kDefaultCapabilities = 0xa80425fbULL;

// The system calls the filter refuses with EPERM (those this architecture has).
// clone and clone3 are handled apart: clone with any CLONE_NEW* flag is
// refused, clone3 answers ENOSYS so that libc falls back to clone (its flags
// sit behind a pointer a seccomp filter cannot read).
std::span<const std::string_view> denied_syscalls();

// Applies all three to the calling process, for good: capabilities first
// (bounding set, then effective/permitted/inheritable), then no_new_privs, then
// the filter. Throws std::runtime_error naming the step that failed.
void confine_process();

}  // namespace mininer
