// A rank under srun: Slurm gives every task of a step its rank and the
// step's size in SLURM_PROCID and SLURM_NTASKS, which is how the P08 ring of
// a gang the Slurm executor started learns its place (gpulab-task train
// --slurm) instead of the --rank/--world a native agent passes.
//
// Its listen address: on one node loopback would do, but ranks on several
// nodes must listen where their peers can reach them. With `--address auto`
// a rank takes its node's own address on the route to the node srun was
// started from (SLURM_LAUNCH_NODE_IPADDR, the batch host): the interface the
// job's traffic already uses, found without a name service or a config file.
#pragma once

#include <functional>
#include <string>

#include "platform/task/train_job.hpp"

namespace gpulab::platform::task {

// The address --address auto asks for.
inline constexpr const char* kAutoAddress = "auto";

// Sets o.rank and o.world from SLURM_PROCID and SLURM_NTASKS as `getenv`
// returns them, and o.address when it is "auto". Throws gpulab::UsageError
// naming the variable when one is missing or not a number in range, or when
// --rank/--world were given too; gpulab::RunError when no route leads to the
// launch node.
void apply_slurm_env(TrainOptions& o, const std::function<const char*(const char*)>& getenv);

// This host's IPv4 source address for packets to `peer` (a numeric IPv4
// address): what the kernel's routing table picks, asked with a UDP
// connect() that sends nothing. Throws gpulab::UsageError for a peer that is
// not an address, gpulab::RunError when there is no route.
std::string local_address_toward(const std::string& peer);

}  // namespace gpulab::platform::task
