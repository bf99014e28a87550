// The straggler check: every rank times its steps, the launcher gathers them,
// and the detector (straggler.hpp) scores each rank's median compute time.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "gpulab/errors.hpp"
#include "gpulab/stats.hpp"
#include "gpulab/table.hpp"
#include "ring_allreduce/commands.hpp"
#include "ring_allreduce/metrics_out.hpp"
#include "ring_allreduce/straggler.hpp"

namespace ring {

using gpulab::Json;

namespace {

// "0.0", never "-0.0", for a value that rounds to zero at `digits`.
std::string fixed(double x, int digits) {
  const double unit = std::pow(10.0, digits);
  return fmt::format("{:.{}f}", std::round(x * unit) / unit + 0.0, digits);
}

std::vector<double> per_step_ms(const std::vector<double>& seconds) {
  std::vector<double> ms;
  for (const double s : seconds) ms.push_back(s * 1e3);
  return ms;
}

}  // namespace

int run_straggler(const RunOptions& o, DType dtype, Json& doc, gpulab::prom::Exposition& metrics) {
  StragglerSpec spec;
  spec.count = o.size;
  spec.dtype = dtype;
  spec.steps = o.steps;
  spec.slow_rank = o.slow_rank;
  spec.slow_factor = o.slow_rank >= 0 ? o.slow_factor : 1.0;
  const auto ranks = launch(o, o.world, straggler_job(spec));
  if (ranks.empty()) return gpulab::kExitOk;  // an MPI rank other than 0: rank 0 reports
  if (!std::all_of(ranks.begin(), ranks.end(),
                   [](const auto& r) { return r.status == RankOutcome::Status::kOk; })) {
    if (o.print())
      fmt::print("FAIL: the straggler run did not complete: {}\n", describe_failures(ranks));
    return gpulab::kExitCheckFailed;
  }
  const StepTimes st = fold_step_times(ranks);
  std::vector<double> compute;
  std::vector<double> compute_wall;
  std::vector<double> wait;
  std::vector<double> step;
  for (std::size_t r = 0; r < st.compute.size(); ++r) {
    compute.push_back(gpulab::median(st.compute[r]));
    compute_wall.push_back(gpulab::median(st.compute_wall[r]));
    wait.push_back(gpulab::median(st.wait[r]));
    std::vector<double> whole(st.compute[r].size());
    for (std::size_t k = 0; k < whole.size(); ++k) whole[k] = st.compute_wall[r][k] + st.wait[r][k];
    step.push_back(gpulab::median(whole));
  }
  const Detection d = detect_stragglers(compute);
  metrics.merge(straggler_metrics(d, wait));

  const bool injected = o.slow_rank >= 0;
  const bool named_exactly = d.stragglers == std::vector<int>{o.slow_rank};
  Json jr = Json::array();
  for (const RankScore& s : d.ranks) {
    const auto r = static_cast<std::size_t>(s.rank);
    jr.push_back({{"rank", s.rank},
                  {"compute_cpu_ms", s.value * 1e3},
                  {"compute_wall_ms", compute_wall[r] * 1e3},
                  {"wait_ms", wait[r] * 1e3},
                  {"step_ms", step[r] * 1e3},
                  {"ratio", s.ratio},
                  {"z", s.z},
                  {"score", s.score},
                  {"straggler", s.straggler},
                  {"compute_cpu_ms_per_step", per_step_ms(st.compute[r])}});
  }
  doc["straggler"] = {{"world", o.world},
                      {"steps", o.steps},
                      {"count", o.size},
                      {"slow_rank", injected ? Json(o.slow_rank) : Json(nullptr)},
                      {"slow_factor", spec.slow_factor},
                      {"median_compute_cpu_ms", d.median * 1e3},
                      {"mad_ms", d.mad * 1e3},
                      {"scale_ms", d.scale * 1e3},
                      {"score_threshold", kStragglerScore},
                      {"ratio_threshold", kStragglerRatio},
                      {"ranks", jr},
                      {"stragglers", d.stragglers},
                      {"wrong", st.wrong}};
  if (injected) doc["straggler"]["injected_rank_named"] = named_exactly;

  if (o.print()) {
    fmt::print("\nstraggler check: world={}, {} steps of compute then ring all-reduce ({} {}), ",
               o.world, o.steps, o.size, dtype == DType::kF64 ? "doubles" : "floats");
    if (injected)
      fmt::print("rank {} slowed {:.1f}x\n", o.slow_rank, o.slow_factor);
    else
      fmt::print("nothing injected\n");
    gpulab::Table t;
    t.column("rank")
        .column("cpu_ms")
        .column("wall_ms")
        .column("wait_ms")
        .column("step_ms")
        .column("ratio")
        .column("z")
        .column("score")
        .column("verdict", gpulab::Table::Align::kLeft);
    for (const RankScore& s : d.ranks) {
      const auto r = static_cast<std::size_t>(s.rank);
      t.row({fmt::format("{}", s.rank), fmt::format("{:.2f}", s.value * 1e3),
             fmt::format("{:.2f}", compute_wall[r] * 1e3), fmt::format("{:.2f}", wait[r] * 1e3),
             fmt::format("{:.2f}", step[r] * 1e3), fmt::format("{:.2f}", s.ratio), fixed(s.z, 2),
             fixed(s.score, 1), s.straggler ? "STRAGGLER" : "ok"});
    }
    fmt::print("{}", t.render());
    fmt::print(
        "medians over the rank's steps: cpu/wall = its own work in CPU/wall time, wait = inside "
        "the "
        "all-reduce, step = wall + wait\n");
    fmt::print(
        "ratio = cpu / median {:.2f} ms; score = (cpu - median) / max(1.4826 MAD, 0.1 median) = "
        "{:.2f} ms\n",
        d.median * 1e3, d.scale * 1e3);
    if (d.stragglers.empty())
      fmt::print(
          "no straggler: no rank is both an outlier (score >= {:.1f}) and {:.1f}x the median\n",
          kStragglerScore, kStragglerRatio);
    for (const int r : d.stragglers) {
      const RankScore& s = d.ranks[static_cast<std::size_t>(r)];
      fmt::print("straggler: rank {} (score {:.1f}, cpu {:.2f}x the median; z-score only {:.2f})\n",
                 r, s.score, s.ratio, s.z);
    }
    if (st.wrong != 0) fmt::print("FAIL: {} elements off the exact sum\n", st.wrong);
    if (injected && named_exactly)
      fmt::print("PASS the detector named exactly the injected rank {}\n", o.slow_rank);
    else if (injected)
      fmt::print("FAIL the detector did not name exactly the injected rank {}\n", o.slow_rank);
  }
  return st.wrong == 0 && (!injected || named_exactly) ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

}  // namespace ring
