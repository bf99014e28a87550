// How a process on a node reaches one accelerator of its inventory: the host
// device files a container needs and the variable that restricts a backend to
// the devices it was given. The platform's agent (a task's container and
// environment) and P06's device plugin in --inventory mode (an Allocate
// response) hand out the same things from these functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpulab::inventory {

// The n of a HAL device id "<backend>:<n>" ("cuda:1" -> 1): the device's
// ordinal within its backend. 0 for an id without one.
int backend_ordinal(std::string_view device_id);

// The control nodes every CUDA process opens besides its /dev/nvidia<i>.
inline constexpr std::string_view kNvidiaControlNodes[] = {"/dev/nvidiactl", "/dev/nvidia-uvm",
                                                           "/dev/nvidia-uvm-tools"};

// The host device files of a device of `backend` with that ordinal, its own
// node first: /dev/nvidia<ordinal> and the control nodes for cuda,
// /dev/fakegpu for fakegpu (P04), none for the HAL CPU backends (cpu_ref,
// fast, blas, PoCL's opencl), which compute in host memory. Whether each
// exists is for the caller to check on the host that uses them.
std::vector<std::string> device_files(std::string_view backend, int ordinal);

// The environment variable that limits a backend's runtime to given devices
// ("CUDA_VISIBLE_DEVICES" for cuda), or "" when the backend has none.
std::string_view visible_devices_variable(std::string_view backend);

}  // namespace gpulab::inventory
