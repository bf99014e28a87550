#include "ptx_dissect/cold_start.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "gpulab/table.hpp"
#include "gpulab/number_format.hpp"

namespace ptx_dissect {

namespace {

std::string contents(const FatbinManifest& m) {
  std::string out;
  for (const int a : m.sass) out += fmt::format("{}sm_{}", out.empty() ? "" : " + ", a);
  for (const int a : m.ptx) out += fmt::format("{}compute_{} PTX", out.empty() ? "" : " + ", a);
  return out;
}

std::string action(const LoadDecision& d) {
  switch (d.action) {
    case LoadDecision::Action::kRunSass:
      return fmt::format("run sm_{} SASS", d.image_arch);
    case LoadDecision::Action::kJitPtx:
      return fmt::format("JIT compute_{} PTX", d.image_arch);
    case LoadDecision::Action::kFail:
      return "load fails";
  }
  return "?";
}

}  // namespace

ColdStartTable cold_start_table(const ColdStartInputs& in) {
  ColdStartTable t;
  for (const auto& gpu : reference_gpus())
    if (decide_load(in.shipped, gpu.arch).action == LoadDecision::Action::kJitPtx)
      t.gpus.push_back(gpu);
  if (t.gpus.empty())
    throw std::invalid_argument("no reference GPU JIT-compiles this fatbin: no cold start to fix");

  ColdStartRow none{"none (today)", {}, "every process with a cold cache compiles first"};
  ColdStartRow arches{"1. new sm_XX in the build matrix", {}, ""};
  ColdStartRow prewarm{"2. pre-warmed JIT cache in the image", {}, ""};
  ColdStartRow lazy{"3. CUDA_MODULE_LOADING=LAZY", {}, ""};
  for (const auto& gpu : t.gpus) {
    const auto today = decide_load(in.shipped, gpu.arch);
    none.at_load.push_back(fmt::format("{}, {} kernels at load", action(today), in.kernels));
    const auto fixed = decide_load(in.with_new_arches, gpu.arch);
    if (fixed.action != LoadDecision::Action::kRunSass)
      throw std::invalid_argument(fmt::format(
          "the fix-1 fatbin ({}) has no SASS for sm_{}", contents(in.with_new_arches), gpu.arch));
    arches.at_load.push_back(action(fixed));
    prewarm.at_load.push_back("reads the cache (compiled at image build)");
    lazy.at_load.push_back(fmt::format("{}, 1 kernel per first launch", action(today)));
  }
  const double growth = in.shipped_bytes == 0
                            ? 0.0
                            : 100.0 * (static_cast<double>(in.with_new_arches_bytes) /
                                           static_cast<double>(in.shipped_bytes) -
                                       1.0);
  arches.cost = fmt::format("fatbin {} -> {} bytes (+{:.0f}%), one ptxas run per new arch",
                            gpulab::with_commas(in.shipped_bytes),
                            gpulab::with_commas(in.with_new_arches_bytes), growth);
  prewarm.cost = "cache in the image; void after a driver upgrade or on another GPU";
  lazy.cost = "the JIT moves to each kernel's first call: latency on the request path";
  t.rows = {none, arches, prewarm, lazy};
  return t;
}

std::string render(const ColdStartTable& t, const ColdStartInputs& in) {
  std::string out = fmt::format(
      "shipped fatbin: {}; fix 1 builds {}\n\n", contents(in.shipped), contents(in.with_new_arches));
  gpulab::Table table;
  table.column("fix", gpulab::Table::Align::kLeft);
  for (const auto& gpu : t.gpus)
    table.column(fmt::format("{} (sm_{}) at load", gpu.name, gpu.arch), gpulab::Table::Align::kLeft);
  table.column("cost", gpulab::Table::Align::kLeft);
  for (const auto& row : t.rows) {
    std::vector<std::string> cells{row.fix};
    cells.insert(cells.end(), row.at_load.begin(), row.at_load.end());
    cells.push_back(row.cost);
    table.row(cells);
  }
  return out + table.render();
}

gpulab::Json to_json(const ColdStartTable& t) {
  gpulab::Json gpus = gpulab::Json::array();
  for (const auto& gpu : t.gpus) gpus.push_back({{"name", gpu.name}, {"arch", gpu.arch}});
  gpulab::Json rows = gpulab::Json::array();
  for (const auto& row : t.rows)
    rows.push_back({{"fix", row.fix}, {"at_load", row.at_load}, {"cost", row.cost}});
  return {{"gpus", gpus}, {"fixes", rows}};
}

}  // namespace ptx_dissect
