#include "cluster_sim/trace.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <istream>
#include <ostream>
#include <sstream>
#include <unordered_set>

#include "gpulab/errors.hpp"
#include "gpulab/utf8_bom.hpp"
#include "gpulab/file.hpp"
#include "gpulab/rng.hpp"
#include "gpulab/text.hpp"

namespace cluster_sim {
namespace {

using gpulab::parse_number;
using gpulab::trim;

}  // namespace

std::vector<Job> parse_trace(std::istream& in, const std::string& source) {
  std::vector<Job> jobs;
  std::unordered_set<std::string> ids;
  std::string raw;
  int line_no = 0;
  bool header_allowed = true;  // only before the first data row
  while (std::getline(in, raw)) {
    ++line_no;
    const std::string_view line = trim(line_no == 1 ? gpulab::without_utf8_bom(raw) : raw);
    if (line.empty() || line.front() == '#') continue;
    auto fail = [&](const std::string& what) {
      throw gpulab::UsageError(fmt::format("{}:{}: {}", source, line_no, what));
    };
    const auto f = gpulab::split_fields(line);
    if (header_allowed && f[0] == "id") {
      header_allowed = false;
      continue;
    }
    header_allowed = false;
    if (f.size() < 4 || f.size() > 7)
      fail(fmt::format("expected id,arrival,gpus,duration[,priority,tenant,cpus], got {} fields", f.size()));
    Job j;
    j.line = line_no;
    j.id = std::string(f[0]);
    if (j.id.empty()) fail("empty job id");
    if (!ids.insert(j.id).second) fail(fmt::format("duplicate job id '{}'", j.id));
    if (!parse_number(f[1], j.arrival) || !std::isfinite(j.arrival) || j.arrival < 0)
      fail(fmt::format("arrival must be a number >= 0, got '{}'", f[1]));
    if (!parse_number(f[2], j.gpus) || j.gpus < 1)
      fail(fmt::format("gpus must be a whole number >= 1, got '{}'", f[2]));
    if (!parse_number(f[3], j.duration) || !std::isfinite(j.duration) || j.duration <= 0)
      fail(fmt::format("duration must be a number > 0, got '{}'", f[3]));
    if (f.size() > 4 && !f[4].empty() && !parse_number(f[4], j.priority))
      fail(fmt::format("priority must be a whole number, got '{}'", f[4]));
    if (f.size() > 5 && !f[5].empty()) j.tenant = std::string(f[5]);
    if (f.size() > 6 && !f[6].empty() && (!parse_number(f[6], j.cpus) || j.cpus < 0))
      fail(fmt::format("cpus must be a whole number >= 0, got '{}'", f[6]));
    jobs.push_back(std::move(j));
  }
  if (in.bad()) throw gpulab::UsageError(fmt::format("{}: read error", source));
  if (jobs.empty()) throw gpulab::UsageError(fmt::format("{}: the trace has no jobs", source));
  return jobs;
}

std::vector<Job> load_trace(const std::string& path) {
  // 256 MiB holds millions of jobs; more is /dev/zero or a file given by mistake.
  std::istringstream in(gpulab::read_input_file(path, 256u << 20));
  return parse_trace(in, path);
}

void write_trace(std::ostream& out, const std::vector<Job>& jobs) {
  out << "id,arrival,gpus,duration,priority,tenant,cpus\n";
  for (const Job& j : jobs) {
    out << fmt::format("{},{},{},{},{},{},{}\n", j.id, j.arrival, j.gpus, j.duration, j.priority,
                       j.tenant, j.cpus);
  }
}

std::vector<Job> generate_trace(const GeneratorConfig& cfg) {
  if (cfg.jobs < 1 || cfg.jobs > 100'000'000) throw gpulab::UsageError("--jobs must be in [1, 100000000]");
  if (!(cfg.load > 0 && cfg.load <= 10)) throw gpulab::UsageError("--load must be in (0, 10]");
  if (!(cfg.mean_duration > 0)) throw gpulab::UsageError("--mean-duration must be > 0");
  if (cfg.nodes < 1 || cfg.gpus_per_node < 1)
    throw gpulab::UsageError("--nodes and --gpus-per-node must be >= 1");
  if (cfg.tenants < 1) throw gpulab::UsageError("--tenants must be >= 1");
  gpulab::Rng rng(cfg.seed);
  const int total = cfg.nodes * cfg.gpus_per_node;
  // Size mix: many small jobs, some whole-node jobs, a few 2-node gangs.
  std::vector<int> sizes;
  std::vector<double> weights;
  for (auto [s, w] : {std::pair{1, 0.35}, {2, 0.25}, {4, 0.2}, {8, 0.15}, {16, 0.05}}) {
    if (s <= total) {
      sizes.push_back(s);
      weights.push_back(w);
    }
  }
  double mean_gpus = 0, wsum = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    mean_gpus += sizes[i] * weights[i];
    wsum += weights[i];
  }
  mean_gpus /= wsum;
  // Log-normal durations with this mean: mu = ln(mean) - sigma^2/2.
  const double sigma = 1.0;
  const double mu = std::log(cfg.mean_duration) - sigma * sigma / 2;
  const double rate = cfg.load * total / (mean_gpus * cfg.mean_duration);  // arrivals per time unit
  std::vector<Job> jobs(cfg.jobs);
  double t = 0;
  for (std::size_t i = 0; i < cfg.jobs; ++i) {
    Job& j = jobs[i];
    j.id = fmt::format("j{}", i);
    t += rng.exponential(rate);
    j.arrival = std::round(t);
    j.gpus = sizes[rng.weighted_index(weights)];
    j.duration = std::max(1.0, std::round(rng.lognormal(mu, sigma)));
    j.priority = rng.bernoulli(cfg.high_priority_fraction) ? 1 : 0;
    j.tenant = fmt::format("t{}", rng.uniform_int(0, cfg.tenants - 1));
    j.cpus = j.gpus * cfg.cpus_per_gpu;
  }
  return jobs;
}

}  // namespace cluster_sim
