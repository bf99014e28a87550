// The cgroup v2 device controller is an eBPF program (BPF_PROG_TYPE_CGROUP_DEVICE)
// attached to the group: the kernel runs it on every open and mknod of a device
// node and refuses the access when it returns 0. mininer assembles it by hand
// (raw bpf(2), no libbpf): 5 instructions per allowed device.
#pragma once

#include <linux/bpf.h>

#include <cstdint>
#include <string>
#include <vector>

#include "mininer/device_rule.hpp"

namespace mininer {

std::vector<bpf_insn> build_device_program(const std::vector<DeviceRule>& allow);

// What the program returns (1 allow, 0 deny) for one access, computed by
// interpreting the instructions build_device_program emits. `access_type` is
// the kernel's (access << 16) | dev_type. Unit tests use it without root.
int evaluate_device_program(const std::vector<bpf_insn>& prog, std::uint32_t access_type,
                            std::uint32_t major, std::uint32_t minor);

// Loads the program (bpf(BPF_PROG_LOAD)); returns its fd. Throws SysError with
// the verifier log on failure.
int load_device_program(const std::vector<bpf_insn>& prog);
// bpf(BPF_PROG_ATTACH, BPF_CGROUP_DEVICE) on the cgroup directory `cgroup_path`.
void attach_device_program(int prog_fd, const std::string& cgroup_path);

}  // namespace mininer
