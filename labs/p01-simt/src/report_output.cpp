#include "simt/report_output.hpp"

#include <fmt/core.h>

#include "gpulab/table.hpp"

namespace simt {
namespace {

using gpulab::Table;

std::string join_words(const std::vector<std::int64_t>& v, std::size_t n) {
  std::string s;
  for (std::size_t i = 0; i < n && i < v.size(); ++i) s += (i ? " " : "") + std::to_string(v[i]);
  return s;
}

std::string verdict(bool ok) { return ok ? "PASS" : "FAIL"; }

// How many of the words [from, to) with index parity `parity` hold `value`.
int count_votes(const std::vector<std::int64_t>& mem, int from, int to, int parity, std::int64_t value) {
  int n = 0;
  for (int i = from; i < to && i < static_cast<int>(mem.size()); ++i)
    if ((i - from) % 2 == parity && mem[static_cast<std::size_t>(i)] == value) ++n;
  return n;
}

}  // namespace

std::string render_divergence_table(const DivergenceReport& report) {
  // Column widths of the curriculum's table: %-16s%8s%8s%10s.
  Table t("");
  t.column("kernel", Table::Align::kLeft, 16)
      .column("issues", Table::Align::kRight, 8)
      .column("util%", Table::Align::kRight, 8)
      .column("slowdown", Table::Align::kRight, 10);
  for (auto name : kTableKernels) {
    const auto& k = report.get(name);
    t.row({std::string(name), fmt::format("{}", k.stats.issues), fmt::format("{:.1f}", k.stats.util_pct()),
           fmt::format("{:.2f}x", report.slowdown(k))});
  }
  return t.render();
}

std::string describe_failure(const KernelResult& k) {
  if (!k.error.empty()) return fmt::format("{}: {}", k.kernel->name, k.error);
  std::string s = fmt::format("{}:", k.kernel->name);
  if (!k.check.ok()) {
    s += fmt::format(" {} of {} words wrong at", k.check.wrong.size(), k.check.checked);
    for (std::size_t i = 0; i < k.check.wrong.size(); ++i) {
      if (i == 6) {
        s += " ...";
        break;
      }
      s += fmt::format(" mem[{}]={} (want {})", k.check.wrong[i], k.check.got[i], k.check.want[i]);
    }
    s += ";";
  }
  if (!k.stats.stack_empty_at_exit) s += " the mask stack was not empty at exit;";
  s.pop_back();
  return s;
}

std::string render_report(const DivergenceReport& report, const LatencyExperiment& latency) {
  std::string out = render_divergence_table(report);

  out += "\nchecks: per-lane results against the reference, mask stack at exit\n";
  Table checks;
  checks.column("kernel", Table::Align::kLeft)
      .column("issues")
      .column("util%")
      .column("depth")
      .column("results")
      .column("stack", Table::Align::kLeft)
      .column("check", Table::Align::kLeft);
  for (const auto& k : report.kernels) {
    if (!k.error.empty()) {
      checks.row({std::string(k.kernel->name), "-", "-", "-", "-", "-", "FAIL"});
      continue;
    }
    checks.row({std::string(k.kernel->name), fmt::format("{}", k.stats.issues), fmt::format("{:.1f}", k.stats.util_pct()),
                fmt::format("{}", k.stats.max_stack_depth),
                fmt::format("{}/{}", k.check.checked - static_cast<int>(k.check.wrong.size()), k.check.checked),
                k.stats.stack_empty_at_exit ? "empty" : "NOT EMPTY", verdict(k.passed())});
  }
  out += checks.render();
  for (const auto& k : report.kernels)
    if (!k.passed()) out += "FAIL " + describe_failure(k) + "\n";

  const auto& nested = report.get("nested");
  const auto& vote = report.get("vote_any");
  const auto& branchy = report.get("even_odd");
  const auto& selp = report.get("even_odd_selp");
  out += "\nextension 1, nested divergence: ";
  out += fmt::format("max stack depth {}, stack {} at exit; mem[0..7] = {}\n", nested.stats.max_stack_depth,
                     nested.stats.stack_empty_at_exit ? "empty" : "NOT EMPTY", join_words(nested.mem, 8));
  out += fmt::format(
      "extension 2, VOTE_ANY: full warp, lane 0 true -> {}/32 lanes read 1; inside the t%2 split -> "
      "{}/16 odd lanes read 0, {}/16 even lanes read 1\n",
      count_votes(vote.mem, 0, 32, 0, 1) + count_votes(vote.mem, 0, 32, 1, 1), count_votes(vote.mem, 32, 64, 1, 0),
      count_votes(vote.mem, 32, 64, 0, 1));
  out += fmt::format(
      "extension 3, SELP if-conversion: even_odd_selp {} issues at {:.1f}% vs even_odd {} at {:.1f}% "
      "({:.2f}x fewer issues), results {}\n",
      selp.stats.issues, selp.stats.util_pct(), branchy.stats.issues, branchy.stats.util_pct(),
      selp.stats.issues ? static_cast<double>(branchy.stats.issues) / static_cast<double>(selp.stats.issues) : 0.0,
      selp.mem == branchy.mem ? "identical" : "DIFFERENT");

  out += fmt::format(
      "\nextension 4, latency hiding: LD stalls a warp {} cycles, {:.1f} other instructions per LD, policy {}\n",
      latency.load_latency, latency.other_per_load, policy_name(latency.policy));
  Table lat;
  lat.column("warps").column("issues").column("cycles").column("util%").column("model%");
  for (const auto& row : latency.rows)
    lat.row({fmt::format("{}", row.warps), fmt::format("{}", row.stats.issues), fmt::format("{}", row.stats.cycles),
             fmt::format("{:.1f}", row.stats.issue_util_pct()), fmt::format("{:.1f}", row.model_pct)});
  out += lat.render();
  out += fmt::format("\n{}: {} of {} kernels passed their checks\n", verdict(report.all_passed()),
                     std::count_if(report.kernels.begin(), report.kernels.end(), [](const auto& k) { return k.passed(); }),
                     report.kernels.size());
  return out;
}

gpulab::Json report_json(const DivergenceReport& report, const LatencyExperiment& latency) {
  gpulab::Json kernels = gpulab::Json::array();
  for (const auto& k : report.kernels) {
    gpulab::Json j;
    j["kernel"] = k.kernel->name;
    j["file"] = k.kernel->file;
    j["issues"] = k.stats.issues;
    j["lane_cycles"] = k.stats.lane_cycles;
    j["util_pct"] = k.stats.util_pct();
    j["slowdown"] = report.slowdown(k);
    j["max_stack_depth"] = k.stats.max_stack_depth;
    j["stack_empty_at_exit"] = k.stats.stack_empty_at_exit;
    j["words_checked"] = k.check.checked;
    j["words_wrong"] = k.check.wrong;
    j["mem"] = k.mem;
    if (!k.error.empty()) j["error"] = k.error;
    j["pass"] = k.passed();
    kernels.push_back(j);
  }
  gpulab::Json rows = gpulab::Json::array();
  for (const auto& r : latency.rows)
    rows.push_back({{"warps", r.warps}, {"issues", r.stats.issues}, {"cycles", r.stats.cycles},
                    {"util_pct", r.stats.issue_util_pct()}, {"model_pct", r.model_pct}});
  gpulab::Json doc;
  doc["kernels"] = kernels;
  doc["latency_hiding"] = {{"load_latency", latency.load_latency},
                           {"other_per_load", latency.other_per_load},
                           {"policy", policy_name(latency.policy)},
                           {"rows", rows}};
  doc["pass"] = report.all_passed();
  return doc;
}

}  // namespace simt
