#include "ring_allreduce/straggler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "gpulab/stats.hpp"
#include "gpulab/timing.hpp"
#include "ring_allreduce/collectives.hpp"

namespace ring {

Detection detect_stragglers(std::span<const double> seconds) {
  if (seconds.size() < 3)
    throw std::invalid_argument(
        "straggler detection needs at least 3 ranks (with 2, each is as far from the median as the "
        "other)");
  Detection d;
  d.median = gpulab::median(seconds);
  std::vector<double> dev;
  for (const double x : seconds) dev.push_back(std::abs(x - d.median));
  d.mad = gpulab::median(dev);
  d.scale = std::max(kMadToSigma * d.mad, kScaleFloor * d.median);
  const double mean = gpulab::mean(seconds);
  const double sd = gpulab::stddev(seconds);
  for (std::size_t r = 0; r < seconds.size(); ++r) {
    RankScore s;
    s.rank = static_cast<int>(r);
    s.value = seconds[r];
    s.ratio = d.median > 0 ? s.value / d.median : 0;
    s.z = sd > 0 ? (s.value - mean) / sd : 0;
    s.score = d.scale > 0 ? (s.value - d.median) / d.scale : 0;
    s.straggler = s.score >= kStragglerScore && s.ratio >= kStragglerRatio;
    if (s.straggler) d.stragglers.push_back(s.rank);
    d.ranks.push_back(s);
  }
  return d;
}

namespace {

// The rank's share of a backward pass: a fixed amount of real arithmetic on an
// L1-resident buffer, so every rank does the same work and only the machine
// (or the injected slowdown) makes one slower. Done in slices, so the slow
// rank can stop close to its target.
constexpr std::size_t kWorkElems = 4096;
constexpr int kWorkPasses = 1024;
constexpr int kSlices = 16;

double work_slice(std::vector<double>& scratch) {
  for (int p = 0; p < kWorkPasses / kSlices; ++p)
    for (double& x : scratch) x = x * 0.999 + 0.001;
  return scratch[0];
}

template <WireFloat T>
gpulab::Json straggler_rank(Transport& t, const StragglerSpec& spec) {
  const int n_ranks = t.world();
  const bool slow = t.rank() == spec.slow_rank;
  // Position-dependent data, as in the timing table: rank r holds (r+1)*(1 + i%8).
  const auto pattern = [](std::size_t i) { return static_cast<double>(1 + i % 8); };
  const double ranks_sum = n_ranks * (n_ranks + 1) / 2.0;
  std::vector<T> grad(spec.count);
  std::vector<double> scratch(kWorkElems, 1.0);
  std::vector<double> compute;
  std::vector<double> compute_wall;
  std::vector<double> wait;
  std::uint64_t wrong = 0;
  double sink = 0;
  barrier(t);
  for (int step = 0; step < spec.warmup + spec.steps; ++step) {
    gpulab::Stopwatch wall;
    const double cpu0 = gpulab::thread_cpu_seconds();
    for (int s = 0; s < kSlices; ++s) sink += work_slice(scratch);
    for (std::size_t i = 0; i < grad.size(); ++i)
      grad[i] = static_cast<T>((t.rank() + 1) * pattern(i));
    if (slow) {
      // Real extra work in proportion to what this step's work really cost
      // here, as a throttled GPU really computes slower.
      const double target = spec.slow_factor * (gpulab::thread_cpu_seconds() - cpu0);
      while (gpulab::thread_cpu_seconds() - cpu0 < target) sink += work_slice(scratch);
    }
    const double computed = gpulab::thread_cpu_seconds() - cpu0;
    const double computed_wall = wall.seconds();
    gpulab::Stopwatch in_collective;
    ring_allreduce<T>(t, grad);
    const double waited = in_collective.seconds();
    for (std::size_t i = 0; i < grad.size(); ++i)
      if (static_cast<double>(grad[i]) != ranks_sum * pattern(i)) ++wrong;
    if (step < spec.warmup) continue;
    compute.push_back(computed);
    compute_wall.push_back(computed_wall);
    wait.push_back(waited);
  }
  return {{"compute_seconds", compute},
          {"compute_wall_seconds", compute_wall},
          {"wait_seconds", wait},
          {"wrong", wrong},
          {"work_checksum", sink}};
}

}  // namespace

RankJob straggler_job(const StragglerSpec& spec) {
  // The vector and the ring's inbox (one chunk, at most the vector).
  const std::uint64_t v = std::uint64_t{spec.count} * dtype_size(spec.dtype);
  return {[spec](Transport& t) {
            return spec.dtype == DType::kF64 ? straggler_rank<double>(t, spec)
                                             : straggler_rank<float>(t, spec);
          },
          MemoryNeed{2 * v + kWorkElems * sizeof(double), 0}};
}

StepTimes fold_step_times(const std::vector<RankOutcome>& ranks) {
  StepTimes st;
  for (const auto& o : ranks) {
    if (o.status != RankOutcome::Status::kOk)
      throw std::runtime_error(fmt::format("rank {} did not finish: {}", o.rank, o.error));
    st.compute.push_back(o.report.at("compute_seconds").get<std::vector<double>>());
    st.compute_wall.push_back(o.report.at("compute_wall_seconds").get<std::vector<double>>());
    st.wait.push_back(o.report.at("wait_seconds").get<std::vector<double>>());
    st.wrong += o.report.at("wrong").get<std::uint64_t>();
  }
  return st;
}

}  // namespace ring
