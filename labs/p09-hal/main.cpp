#include <fmt/format.h>

#include "gpulab/cli.hpp"
#include "hal/hal.hpp"

namespace hal = gpulab::hal;

int main(int argc, char** argv) {
  CLI::App app{"hal-demo: load every backend, show capabilities and routing"};
  return gpulab::run_program("hal-demo", app, argc, argv, [&] {
    hal::Registry reg(hal::DiscoveryOptions::from_environment());
    for (const auto& b : reg.backends())
      fmt::print("loaded backend: {:<10}(abi v{}, dtypes={}, perf={})\n", b->name(), b->abi_major(),
                 hal::dtype_mask_string(b->dtypes()), b->perf_hint());
    for (const auto& r : reg.rejected()) fmt::print("rejected backend: {:<8}({})\n", r.name, r.message);
    return gpulab::kExitOk;
  });
}
