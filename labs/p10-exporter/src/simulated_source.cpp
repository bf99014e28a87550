#include "exporter/simulated_source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

#include "gpulab/errors.hpp"
#include "gpulab/text.hpp"

namespace exporter {

namespace {

using gpulab::trim;

unsigned parse_unsigned(std::string_view s, std::string_view item, std::string_view what) {
  unsigned v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) {
    throw gpulab::UsageError(
        fmt::format("--inject '{}': {} '{}' is not a whole number", item, what, s));
  }
  return v;
}

// Rounds to a multiple of step; divides by 1/step when step < 1 so that 0.69
// comes out as the double nearest 0.69, not 0.6900000000000001.
double round_to(double v, double step) {
  if (step < 1) {
    const double inv = std::round(1 / step);
    return std::round(v * inv) / inv;
  }
  return std::round(v / step) * step;
}

constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

double parse_duration(std::string_view text) {
  const std::string_view t = trim(text);
  std::size_t i = 0;
  while (i < t.size() && ((t[i] >= '0' && t[i] <= '9') || t[i] == '.')) ++i;
  const std::string_view number = t.substr(0, i);
  const std::string_view unit = t.substr(i);
  double v = 0;
  const auto [p, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
  if (number.empty() || ec != std::errc() || p != number.data() + number.size()) {
    throw gpulab::UsageError(fmt::format("'{}' is not a duration (e.g. 30s, 1.5m, 500ms)", text));
  }
  double scale = 0;
  if (unit == "ms") {
    scale = 1e-3;
  } else if (unit == "s") {
    scale = 1;
  } else if (unit == "m") {
    scale = 60;
  } else if (unit == "h") {
    scale = 3600;
  } else {
    throw gpulab::UsageError(fmt::format("'{}': the unit must be ms, s, m or h", text));
  }
  const double seconds = v * scale;
  if (!std::isfinite(seconds) || seconds > 365.0 * 86400) {
    throw gpulab::UsageError(fmt::format("'{}' is too long (at most a year)", text));
  }
  return seconds;
}

std::vector<Injection> parse_injections(std::string_view spec) {
  std::vector<Injection> out;
  if (trim(spec).empty()) return out;
  std::size_t pos = 0;
  while (pos <= spec.size()) {
    std::size_t comma = spec.find(',', pos);
    if (comma == std::string_view::npos) comma = spec.size();
    const std::string_view item = trim(spec.substr(pos, comma - pos));
    pos = comma + 1;
    if (item.empty()) {
      if (comma == spec.size() && !out.empty()) break;
      throw gpulab::UsageError("--inject: empty item (syntax: KIND:ARG@TIME[,...])");
    }
    const std::size_t at = item.find('@');
    const std::size_t colon = item.find(':');
    if (at == std::string_view::npos || colon == std::string_view::npos || colon > at) {
      throw gpulab::UsageError(fmt::format(
          "--inject '{}': expected KIND:ARG@TIME, e.g. xid:79@30s, thermal:0@60s, leak:2@10s",
          item));
    }
    const std::string_view kind = item.substr(0, colon);
    const std::string_view args = item.substr(colon + 1, at - colon - 1);
    Injection inj;
    try {
      inj.at_seconds = parse_duration(item.substr(at + 1));
    } catch (const gpulab::UsageError& e) {
      throw gpulab::UsageError(fmt::format("--inject '{}': {}", item, e.what()));
    }
    if (kind == "xid") {
      inj.kind = Injection::Kind::kXid;
      const std::size_t c2 = args.find(':');
      inj.xid = parse_unsigned(args.substr(0, c2), item, "the Xid code");
      if (c2 != std::string_view::npos) inj.gpu = parse_unsigned(args.substr(c2 + 1), item, "GPU");
      if (inj.xid == 0 || inj.xid > 1000) {
        throw gpulab::UsageError(fmt::format("--inject '{}': Xid codes are 1..1000", item));
      }
    } else {
      if (kind == "thermal") {
        inj.kind = Injection::Kind::kThermal;
      } else if (kind == "power") {
        inj.kind = Injection::Kind::kPower;
      } else if (kind == "leak") {
        inj.kind = Injection::Kind::kLeak;
      } else if (kind == "ecc") {
        inj.kind = Injection::Kind::kEcc;
      } else {
        throw gpulab::UsageError(fmt::format(
            "--inject '{}': unknown kind '{}' (xid, thermal, power, leak, ecc)", item, kind));
      }
      inj.gpu = parse_unsigned(args, item, "GPU");
    }
    out.push_back(inj);
  }
  return out;
}

SimulatedGpus::SimulatedGpus(unsigned count, std::uint64_t seed, std::vector<Injection> injections)
    : injections_(std::move(injections)), fired_(injections_.size(), false) {
  if (count == 0 || count > kMaxGpus) {
    throw gpulab::UsageError(fmt::format("--simulate {}: simulate 1..{} GPUs", count, kMaxGpus));
  }
  for (const auto& inj : injections_) {
    if (inj.gpu >= count) {
      throw gpulab::UsageError(fmt::format(
          "--inject: GPU {} does not exist (--simulate {} has 0..{})", inj.gpu, count, count - 1));
    }
  }
  gpulab::Rng setup(seed);
  for (unsigned i = 0; i < count; ++i) {
    Gpu g;
    g.base_util = 0.6 + 0.3 * setup.uniform01();
    g.base_mem = std::floor((0.35 + 0.35 * setup.uniform01()) * kMemoryTotalBytes / kMiB) * kMiB;
    g.rng = gpulab::Rng(setup.next_u64());
    GpuSample s;
    s.device.index = static_cast<int>(i);
    const std::uint64_t a = setup.next_u64();
    const std::uint64_t b = setup.next_u64();
    s.device.id = fmt::format("GPU-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", a >> 32,
                              (a >> 16) & 0xffff, a & 0xffff, b >> 48, b & 0xffffffffffffULL);
    s.device.vendor = "gpulab";
    s.device.backend = "simulated";
    s.device.model = "Simulated H100 80GB HBM3";
    s.device.memory_bytes = static_cast<std::uint64_t>(kMemoryTotalBytes);
    s.energy_joules = 0;
    s.ecc_single_bit = 0;
    s.ecc_double_bit = 0;
    gpus_.push_back(std::move(g));
    state_.push_back(std::move(s));
  }
  step(0);
}

void SimulatedGpus::advance_to(double t_seconds) {
  const auto target = static_cast<std::int64_t>(std::floor(std::max(0.0, t_seconds)));
  while (tick_ < target) step(tick_ + 1);
}

void SimulatedGpus::step(std::int64_t k) {
  tick_ = k;
  const auto now = static_cast<double>(k);
  // Events whose time has come (each fires once, at the first tick at or after it).
  for (std::size_t i = 0; i < injections_.size(); ++i) {
    const Injection& inj = injections_[i];
    if (fired_[i] || inj.at_seconds > now) continue;
    if (inj.kind == Injection::Kind::kXid) {
      GpuSample& s = state_[inj.gpu];
      s.xid_counts[inj.xid] += 1;
      s.last_xid = inj.xid;
      if (inj.xid == 48) *s.ecc_double_bit += 1;
      if (inj.xid == 79) gpus_[inj.gpu].lost = true;
      s.device.health = health_after_xids(s.xid_counts, s.last_xid);
      fired_[i] = true;
    } else if (inj.kind == Injection::Kind::kEcc) {
      *state_[inj.gpu].ecc_single_bit += 1;
      fired_[i] = true;
    }
  }
  const auto active = [&](unsigned gpu, Injection::Kind kind) {
    return std::any_of(injections_.begin(), injections_.end(), [&](const Injection& inj) {
      return inj.gpu == gpu && inj.kind == kind && inj.at_seconds <= now;
    });
  };
  for (unsigned i = 0; i < gpus_.size(); ++i) {
    Gpu& g = gpus_[i];
    GpuSample& s = state_[i];
    // Draw the same number of values every tick so one GPU's faults never
    // shift another's random stream.
    const double u_util = g.rng.uniform01();
    const double u_temp = g.rng.uniform01();
    const double u_pcie = g.rng.uniform01();
    const bool thermal = active(i, Injection::Kind::kThermal);
    const bool power_cap = active(i, Injection::Kind::kPower);
    const bool leaking = active(i, Injection::Kind::kLeak);

    double util = std::clamp(g.base_util + 0.1 * (u_util - 0.5), 0.0, 1.0);
    if (g.lost) util = 0;
    double watts = 90 + 560 * util;
    double clock = 1980e6;
    double temp = 32 + 50 * util + 2 * (u_temp - 0.5);
    if (thermal) {
      temp = 93 + 2 * (u_temp - 0.5);
      clock = 1200e6;
      watts *= 0.7;
    }
    if (power_cap) {
      watts = std::min(watts, 350.0);
      clock = std::min(clock, 1410e6);
    }
    if (g.lost) clock = 0;
    if (leaking) g.leaked += 512 * kMiB;
    const double used = std::min(g.base_mem + g.leaked, kMemoryTotalBytes - 256 * kMiB);

    s.utilization_ratio = round_to(util, 0.01);  // NVML reports whole percent
    s.memory_used_bytes = used;
    s.memory_free_bytes = kMemoryTotalBytes - used;
    s.temperature_celsius = std::round(temp);
    s.power_watts = round_to(watts, 0.001);  // NVML reports milliwatts
    if (k > 0) *s.energy_joules = round_to(*s.energy_joules + watts, 0.001);
    s.sm_clock_hertz = clock;
    s.pcie_tx_bytes_per_second = round_to(util * 14e9 * (0.9 + 0.2 * u_pcie), 1024);
    s.pcie_rx_bytes_per_second = round_to(util * 6e9 * (0.9 + 0.2 * u_pcie), 1024);
    s.throttled_thermal = thermal;
    s.throttled_power = power_cap;
  }
}

SimulatedSource::SimulatedSource(SimulatedGpus gpus, std::function<double()> clock,
                                 bool dcgm_compat)
    : gpus_(std::move(gpus)), clock_(std::move(clock)), dcgm_compat_(dcgm_compat) {}

Availability SimulatedSource::collect(gpulab::prom::Exposition& out) {
  gpus_.advance_to(clock_());
  add_gpu_metrics(gpus_.sample(), dcgm_compat_, out);
  return available();
}

}  // namespace exporter
