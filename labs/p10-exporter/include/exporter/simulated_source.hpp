// A simulated GPU fleet with seeded, deterministic behaviour and injected
// faults, for demos, tests and failure drills.
//
// Time is simulated in whole seconds ("ticks"): the state at time t is the
// state after tick floor(t), so the same --seed, --inject and time give the
// same numbers on every machine. Injection syntax (comma-separated):
//
//   xid:CODE[:GPU]@TIME   one Xid event CODE on GPU (default 0); 79 = the GPU
//                          fell off the bus (its workload stops: utilisation,
//                          PCIe and clocks go to 0); 48 = double-bit ECC error
//                          (also counts one double_bit ECC error)
//   thermal:GPU@TIME      thermal throttling from TIME on (93 °C, SM clock 1.2 GHz)
//   power:GPU@TIME        power capping from TIME on (power held at 350 W, 1.41 GHz)
//   leak:GPU@TIME         device memory leaks 512 MiB per second from TIME on
//   ecc:GPU@TIME          one single-bit (corrected) ECC error
//
// TIME is a number with unit ms, s, m or h ("30s", "1.5m", "500ms").
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "exporter/source.hpp"
#include "gpulab/rng.hpp"

namespace exporter {

struct Injection {
  enum class Kind { kXid, kThermal, kPower, kLeak, kEcc };
  Kind kind = Kind::kXid;
  unsigned gpu = 0;
  unsigned xid = 0;  // kXid only
  double at_seconds = 0;
};

// Parses the syntax above; throws gpulab::UsageError naming the bad item.
std::vector<Injection> parse_injections(std::string_view spec);
// "30s", "1.5m", "500ms", "2h" -> seconds; throws gpulab::UsageError.
double parse_duration(std::string_view text);

class SimulatedGpus {
 public:
  static constexpr unsigned kMaxGpus = 64;
  static constexpr double kMemoryTotalBytes = 81559.0 * 1024 * 1024;  // an H100 80GB, as NVML says

  // Throws gpulab::UsageError if count is 0 or above kMaxGpus, or an injection
  // names a GPU that does not exist.
  SimulatedGpus(unsigned count, std::uint64_t seed, std::vector<Injection> injections);

  // Runs ticks up to floor(t_seconds); time never goes back (an earlier t is a no-op).
  void advance_to(double t_seconds);
  [[nodiscard]] std::int64_t tick() const { return tick_; }
  [[nodiscard]] std::vector<GpuSample> sample() const { return state_; }

 private:
  struct Gpu {
    double base_util = 0;
    double base_mem = 0;
    double leaked = 0;
    bool lost = false;
    gpulab::Rng rng{0};
  };
  void step(std::int64_t k);

  std::vector<Injection> injections_;
  std::vector<bool> fired_;
  std::vector<Gpu> gpus_;
  std::vector<GpuSample> state_;
  std::int64_t tick_ = -1;
};

// The source: samples the fleet at clock() seconds of simulated time.
class SimulatedSource : public Source {
 public:
  SimulatedSource(SimulatedGpus gpus, std::function<double()> clock, bool dcgm_compat);
  [[nodiscard]] std::string_view name() const override { return "simulated"; }
  Availability collect(gpulab::prom::Exposition& out) override;

 private:
  SimulatedGpus gpus_;
  std::function<double()> clock_;
  bool dcgm_compat_;
};

}  // namespace exporter
