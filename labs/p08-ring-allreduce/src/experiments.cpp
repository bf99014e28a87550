#include "ring_allreduce/experiments.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "gpulab/stats.hpp"
#include "gpulab/timing.hpp"
#include "ring_allreduce/chunks.hpp"
#include "ring_allreduce/fatal_error.hpp"

namespace ring {
namespace {

template <WireFloat T>
std::uint64_t count_wrong(std::span<const T> v, const std::function<double(std::size_t)>& expected) {
  std::uint64_t wrong = 0;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (static_cast<double>(v[i]) != expected(i)) ++wrong;
  return wrong;
}

template <WireFloat T>
gpulab::Json headline_rank(Transport& t, const HeadlineSpec& spec) {
  const int n_ranks = t.world();
  const auto fill = static_cast<T>(t.rank() + 1);  // rank r contributes r+1: the sum is 1+2+...+N
  const double expected = n_ranks * (n_ranks + 1) / 2.0;
  const auto exact = [&](std::size_t) { return expected; };
  StepHook kill;
  if (spec.kill_rank == t.rank())
    kill = [&](int step) {
      if (step == spec.kill_step) ::_exit(kKilledExitCode);
    };
  if (spec.fatal_rank == t.rank())
    kill = [&](int step) {
      if (step == spec.fatal_step) exit_on_fatal_device_error(t.rank(), step);
    };

  std::vector<T> v(spec.count, fill);
  t.reset_counters();
  gpulab::Stopwatch ring_sw;
  ring_allreduce<T>(t, v, kill);
  const double ring_seconds = ring_sw.seconds();
  const auto ring_bytes = t.bytes_sent();
  const auto ring_wrong = count_wrong<T>(v, exact);

  std::fill(v.begin(), v.end(), fill);
  t.reset_counters();
  naive_allreduce<T>(t, v);
  return {{"ring_bytes", ring_bytes},
          {"ring_seconds", ring_seconds},
          {"ring_wrong", ring_wrong},
          {"naive_bytes", t.bytes_sent()},
          {"naive_wrong", count_wrong<T>(v, exact)}};
}

template <WireFloat T>
gpulab::Json timing_rank(Transport& t, const TimingSpec& spec) {
  const int n_ranks = t.world();
  // Position-dependent data, so a chunk summed into the wrong place is caught:
  // rank r holds (r+1)*(1 + i%8); the exact sum is N(N+1)/2 * (1 + i%8).
  const auto pattern = [](std::size_t i) { return static_cast<double>(1 + i % 8); };
  const double ranks_sum = n_ranks * (n_ranks + 1) / 2.0;
  // What is timed for each size: every algorithm over the path the
  // rendezvous chose, and the ring over TCP too when both are asked for.
  struct Variant {
    Algo algo;
    bool tcp;
  };
  std::vector<Variant> variants;
  for (const Algo a : spec.algos) {
    variants.push_back({a, false});
    if (a == Algo::kRing && spec.both_paths && t.has_shm()) variants.push_back({a, true});
  }
  const auto via = [&](const Variant& v) {
    if (v.algo == Algo::kMpi) return std::string("mpi");
    t.force_tcp(v.tcp);
    std::string name = t.paths_name();
    t.force_tcp(false);
    return name;
  };
  gpulab::Json rows = gpulab::Json::array();
  gpulab::Json copies = gpulab::Json::array();
  for (const std::size_t bytes : spec.sizes_bytes) {
    const std::size_t count = bytes / sizeof(T);
    std::vector<T> input(count);
    for (std::size_t i = 0; i < count; ++i) input[i] = static_cast<T>((t.rank() + 1) * pattern(i));
    std::vector<T> output(count);
    std::vector<std::vector<double>> seconds(variants.size());
    std::vector<std::uint64_t> wrong(variants.size(), 0);
    std::vector<double> memcpy_seconds;
    for (int round = 0; round < spec.rounds; ++round) {
      for (std::size_t k = 0; k < variants.size(); ++k) {
        const Variant& v = variants[k];
        t.force_tcp(v.tcp);
        // Out of place like nccl-tests: every iteration starts from the same input.
        const auto once = [&] {
          std::copy(input.begin(), input.end(), output.begin());
          allreduce<T>(v.algo, t, output);
        };
        for (int i = 0; i < spec.warmup; ++i) once();
        barrier(t);
        gpulab::Stopwatch sw;
        for (int i = 0; i < spec.iters; ++i) once();
        seconds[k].push_back(sw.seconds() / spec.iters);
        wrong[k] += count_wrong<T>(output, [&](std::size_t i) { return ranks_sum * pattern(i); });
        t.force_tcp(false);
      }
      // The ceiling: one core copying the same bytes, timed on rank 0 while
      // the others sleep in the barrier (on shared memory, in FUTEX_WAIT).
      if (t.rank() == 0 && count > 0) {
        for (int i = 0; i < spec.warmup; ++i) std::memcpy(output.data(), input.data(), count * sizeof(T));
        gpulab::Stopwatch sw;
        for (int i = 0; i < spec.iters; ++i) std::memcpy(output.data(), input.data(), count * sizeof(T));
        memcpy_seconds.push_back(sw.seconds() / spec.iters);
      }
      barrier(t);
    }
    for (std::size_t k = 0; k < variants.size(); ++k)
      rows.push_back({{"algo", algo_name(variants[k].algo)}, {"via", via(variants[k])}, {"bytes", count * sizeof(T)},
                      {"count", count}, {"seconds", seconds[k]}, {"wrong", wrong[k]}});
    copies.push_back({{"bytes", count * sizeof(T)}, {"seconds", memcpy_seconds}});
  }
  return {{"rows", rows}, {"memcpy", copies}};
}

const gpulab::Json& report_of(const RankOutcome& o) {
  if (o.status != RankOutcome::Status::kOk)
    throw std::runtime_error(fmt::format("rank {} did not finish: {}", o.rank, o.error));
  return o.report;
}

}  // namespace

RankJob headline_job(const HeadlineSpec& spec) {
  // The vector and the ring's inbox (one chunk, at most the vector), plus the
  // naive all-reduce's gather of every rank's vector.
  const std::uint64_t v = std::uint64_t{spec.count} * dtype_size(spec.dtype);
  return {[spec](Transport& t) {
            return spec.dtype == DType::kF64 ? headline_rank<double>(t, spec) : headline_rank<float>(t, spec);
          },
          MemoryNeed{2 * v, v}};
}

std::uint64_t Headline::ring_max() const { return *std::max_element(ring_bytes.begin(), ring_bytes.end()); }
std::uint64_t Headline::naive_max() const { return *std::max_element(naive_bytes.begin(), naive_bytes.end()); }

Headline fold_headline(const std::vector<RankOutcome>& ranks) {
  Headline h;
  h.world = static_cast<int>(ranks.size());
  h.expected = h.world * (h.world + 1) / 2.0;
  h.ring_correct = h.naive_correct = true;
  for (const auto& o : ranks) {
    const auto& rep = report_of(o);
    h.ring_bytes.push_back(rep["ring_bytes"].get<std::uint64_t>());
    h.naive_bytes.push_back(rep["naive_bytes"].get<std::uint64_t>());
    h.ring_correct = h.ring_correct && rep["ring_wrong"].get<std::uint64_t>() == 0;
    h.naive_correct = h.naive_correct && rep["naive_wrong"].get<std::uint64_t>() == 0;
  }
  return h;
}

std::vector<std::string> byte_count_failures(const Headline& h, std::size_t count, std::size_t elem_bytes) {
  std::vector<std::string> fails;
  const auto naive = naive_bytes_sent(count, h.world, elem_bytes);
  for (int r = 0; r < h.world; ++r) {
    const auto at = static_cast<std::size_t>(r);
    const auto exact = ring_bytes_sent(count, h.world, r, elem_bytes);
    if (h.ring_bytes[at] != exact)
      fails.push_back(fmt::format("rank {} wrote {} ring bytes, the exact formula says {}", r, h.ring_bytes[at], exact));
    if (h.naive_bytes[at] != naive)
      fails.push_back(fmt::format("rank {} wrote {} naive bytes, (N-1)*V is {}", r, h.naive_bytes[at], naive));
  }
  return fails;
}

RankJob timing_job(const TimingSpec& spec) {
  // The largest size: input, output and the ring's inbox; the tree keeps one
  // inbox per child (two); the naive all-reduce gathers every rank's copy.
  const std::uint64_t v =
      spec.sizes_bytes.empty() ? 0 : *std::max_element(spec.sizes_bytes.begin(), spec.sizes_bytes.end());
  const auto uses = [&](Algo a) { return std::find(spec.algos.begin(), spec.algos.end(), a) != spec.algos.end(); };
  return {[spec](Transport& t) {
            return spec.dtype == DType::kF64 ? timing_rank<double>(t, spec) : timing_rank<float>(t, spec);
          },
          MemoryNeed{(uses(Algo::kTree) ? 5 : 3) * v, uses(Algo::kNaive) ? v : 0}};
}

double busbw_factor(int world) { return 2.0 * (world - 1) / world; }

std::vector<TimingRow> fold_timing(const std::vector<RankOutcome>& ranks, int world) {
  std::vector<TimingRow> rows;
  std::vector<double> memcpy_GBps;  // per size, in the order the sizes were timed
  std::vector<std::size_t> memcpy_bytes;
  for (const auto& o : ranks) {
    const auto& rep = report_of(o)["rows"];
    if (rows.empty()) rows.resize(rep.size());
    for (std::size_t i = 0; i < rep.size(); ++i) {
      TimingRow& row = rows[i];
      row.algo = parse_algo(rep[i]["algo"].get<std::string>());
      row.via = rep[i]["via"].get<std::string>();
      row.bytes = rep[i]["bytes"].get<std::size_t>();
      row.count = rep[i]["count"].get<std::size_t>();
      const auto secs = rep[i]["seconds"].get<std::vector<double>>();
      if (row.round_seconds.size() < secs.size()) row.round_seconds.resize(secs.size(), 0.0);
      // Each round's all-reduces end with the slowest rank.
      for (std::size_t k = 0; k < secs.size(); ++k) row.round_seconds[k] = std::max(row.round_seconds[k], secs[k]);
      row.wrong += rep[i]["wrong"].get<std::uint64_t>();
    }
    for (const auto& c : report_of(o)["memcpy"]) {
      const auto secs = c["seconds"].get<std::vector<double>>();
      if (secs.empty()) continue;  // only rank 0 copies
      const double med = gpulab::median(secs);
      memcpy_bytes.push_back(c["bytes"].get<std::size_t>());
      memcpy_GBps.push_back(med > 0 ? static_cast<double>(memcpy_bytes.back()) / med / 1e9 : 0);
    }
  }
  for (auto& row : rows) {
    row.seconds = row.round_seconds.empty() ? 0 : gpulab::median(row.round_seconds);
    row.algbw = row.seconds > 0 ? static_cast<double>(row.bytes) / row.seconds / 1e9 : 0;
    row.busbw = row.algbw * busbw_factor(world);
    for (std::size_t k = 0; k < memcpy_bytes.size(); ++k)
      if (memcpy_bytes[k] == row.bytes) row.memcpy_GBps = memcpy_GBps[k];
  }
  return rows;
}

std::vector<std::size_t> doubling_sizes(std::size_t min_bytes, std::size_t max_bytes) {
  std::vector<std::size_t> sizes;
  for (std::size_t b = min_bytes; b <= max_bytes; b *= 2) sizes.push_back(b);
  return sizes;
}

std::vector<std::size_t> crossover_sizes(bool quick) {
  if (quick) return {1'000, 10'000, 100'000, 1'000'000};
  return {1'000, 3'000, 10'000, 30'000, 100'000, 300'000, 1'000'000, 3'000'000, 10'000'000};
}

Crossover find_crossover(const std::vector<TimingRow>& rows) {
  std::vector<std::pair<std::size_t, bool>> ring_faster;  // (size, ring < tree), ascending size
  for (const auto& r : rows) {
    if (r.algo != Algo::kRing) continue;
    for (const auto& t : rows)
      if (t.algo == Algo::kTree && t.bytes == r.bytes) ring_faster.emplace_back(r.bytes, r.seconds < t.seconds);
  }
  std::sort(ring_faster.begin(), ring_faster.end());
  Crossover c;
  for (const auto& [bytes, ring_wins] : ring_faster)
    if (!ring_wins) c.tree_wins_up_to = bytes;
  for (auto it = ring_faster.rbegin(); it != ring_faster.rend() && it->second; ++it) c.ring_wins_from = it->first;
  c.found = c.tree_wins_up_to != 0 && c.ring_wins_from != 0 && c.ring_wins_from > c.tree_wins_up_to;
  return c;
}

std::string describe_failures(const std::vector<RankOutcome>& ranks) {
  std::string out;
  for (const auto& o : ranks) {
    if (o.status == RankOutcome::Status::kOk) continue;
    if (!out.empty()) out += "; ";
    out += fmt::format("rank {}: {}", o.rank, o.error);
  }
  return out;
}

}  // namespace ring
