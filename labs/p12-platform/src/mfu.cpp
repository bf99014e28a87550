#include "platform/mfu.hpp"

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "conformance/hal_target.hpp"
#include "conformance/perf_tier.hpp"
#include "gpulab/json.hpp"
#include "hal/hal.hpp"

namespace platform {

std::optional<PeakFlops> measure_peak_flops(std::string_view backend, std::chrono::nanoseconds budget) {
  const gpulab::hal::Registry reg(gpulab::hal::DiscoveryOptions::from_environment());
  const gpulab::hal::Backend* be = reg.find(backend);
  if (be == nullptr) return std::nullopt;
  conformance::HalTarget target(*be);
  std::optional<PeakFlops> best;
  std::optional<std::pair<std::uint64_t, double>> last;  // size, best seconds
  for (const std::uint64_t n : kPeakSizes) {
    if (last) {
      const double scale = std::pow(static_cast<double>(n) / static_cast<double>(last->first), 3);
      const double predicted_s = last->second * scale * (kPeakReps + 1);  // the warm-up too
      if (predicted_s > std::chrono::duration<double>(budget).count()) break;
    }
    const auto seconds = target.time_matmul(n, n, n, kPeakReps);
    if (!seconds || *seconds <= 0) continue;
    last = {n, *seconds};
    const double flops = conformance::matmul_gflops(n, n, n, *seconds) * 1e9;
    if (!best || flops > best->flops) {
      best = PeakFlops{flops, n, fmt::format("HAL {} F32 matmul {}x{}x{}, best of {}", backend, n, n, n, kPeakReps)};
    }
  }
  return best;
}

std::optional<Pace> last_pace(std::string_view log) {
  std::size_t end = log.size();
  while (end > 0) {
    const auto start = log.rfind('\n', end - 1);
    const std::size_t from = start == std::string_view::npos ? 0 : start + 1;
    const std::string_view line = log.substr(from, end - from);
    if (line.find("\"event\":\"pace\"") != std::string_view::npos) {
      try {
        const auto j = gpulab::Json::parse(line);
        Pace p;
        p.rank = j.at("rank").get<int>();
        p.step = j.at("step").get<std::uint64_t>();
        p.steps = j.at("steps").get<std::uint64_t>();
        p.seconds = j.at("seconds").get<double>();
        p.model_flops = j.at("model_flops").get<double>();
        return p;
      } catch (const gpulab::Json::exception&) {
        // A line cut by the log's tail, or not ours: an older one may do.
      }
    }
    if (start == std::string_view::npos) break;
    end = start;
  }
  return std::nullopt;
}

double achieved_flops(const Pace& p) { return p.seconds > 0 ? p.model_flops / p.seconds : 0; }

std::optional<double> model_flop_utilisation(const Pace& p, double peak_flops) {
  if (!(peak_flops > 0)) return std::nullopt;
  return achieved_flops(p) / peak_flops;
}

}  // namespace platform
