// hal-demo: the curriculum's Phase 09 Lab 01 walkthrough with this build's
// backends — what loaded (ABI version, dtypes, perf hint), what was rejected
// and why, the FP32 matmul conformance pass, every other declared dtype
// tested, and capability routing for FP32, FP16, BF16, FP8.
#include <fmt/format.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "gpulab/cli.hpp"
#include "gpulab/json.hpp"
#include "gpulab/metrics_out.hpp"
#include "gpulab/prom_text.hpp"
#include "hal/hal.hpp"
#include "hal/walkthrough.hpp"
#include "hal/walkthrough_report.hpp"

namespace hal = gpulab::hal;
namespace fs = std::filesystem;

namespace {

struct Options {
  gpulab::CommonOptions common;
  std::string backend_dir;
  std::string backends;  // comma list of names
  std::string shape = "61x47x35";
  bool no_gate = false;
  bool devices = false;
  std::string metrics_out;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, sep);)
    if (!item.empty()) out.push_back(item);
  return out;
}

hal::WalkthroughOptions parse_shape(const std::string& text) {
  const auto parts = split(text, 'x');
  hal::WalkthroughOptions w;
  std::uint64_t v[3];
  if (parts.size() != 3) throw gpulab::UsageError("--shape wants MxNxK, e.g. 61x47x35; got '" + text + "'");
  for (int i = 0; i < 3; ++i) {
    std::size_t used = 0;
    try {
      v[i] = std::stoull(parts[static_cast<std::size_t>(i)], &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != parts[static_cast<std::size_t>(i)].size() || parts[static_cast<std::size_t>(i)][0] == '-' ||
        v[i] > 1024)
      throw gpulab::UsageError("--shape wants three integers 0..1024 as MxNxK; got '" + text + "'");
  }
  w.m = v[0];
  w.n = v[1];
  w.k = v[2];
  return w;
}

void load_backends(hal::Registry& reg, const Options& o) {
  const fs::path dir = o.backend_dir.empty() ? hal::build_backend_dir() : fs::path(o.backend_dir);
  if (!o.backend_dir.empty() && !fs::is_directory(dir))
    throw gpulab::UsageError("--backend-dir " + o.backend_dir + " is not a directory");
  if (o.backends.empty()) {
    if (o.backend_dir.empty())
      reg.discover(hal::DiscoveryOptions::from_environment());
    else
      reg.discover(hal::DiscoveryOptions::only_dir(dir));
    return;
  }
  for (const std::string& name : split(o.backends, ',')) {
    const fs::path lib = dir / hal::backend_file_name(name);
    if (!fs::exists(lib)) {
      std::string have;
      for (const auto& e : fs::directory_iterator(dir)) {
        std::string f = e.path().filename().string();
        if (f.starts_with("gpulab-hal-") && f.ends_with(".so")) have += " " + f.substr(11, f.size() - 14);
      }
      throw gpulab::UsageError(fmt::format("no backend '{}' in {} (have:{})", name, dir.string(), have));
    }
    reg.load(lib, hal::Source::kExplicit);
  }
}

void write_metrics(const std::string& path, const hal::Registry& reg) {
  gpulab::prom::Exposition e;
  e.gauge("hal_backends", "HAL backends found by discovery, by outcome.")
      .set({{"state", "loaded"}}, static_cast<double>(reg.backends().size()))
      .set({{"state", "rejected"}}, static_cast<double>(reg.rejected().size()));
  gpulab::write_metrics_out(path, e);
}

int run(const Options& o) {
  hal::WalkthroughOptions wo = parse_shape(o.shape);
  wo.seed = o.common.seed;
  wo.gate = !o.no_gate;
  hal::Registry reg;
  load_backends(reg, o);
  if (!o.metrics_out.empty()) write_metrics(o.metrics_out, reg);
  const hal::Walkthrough w = hal::run_walkthrough(reg, wo);
  if (o.common.json) {
    const gpulab::Json doc = hal::walkthrough_json(reg, w, wo);
    gpulab::print_json(doc);
    return doc["pass"].get<bool>() ? gpulab::kExitOk : gpulab::kExitCheckFailed;
  }
  fmt::print("{}", hal::render_walkthrough(reg, w, wo, o.devices));
  return hal::walkthrough_passed(reg, w) ? gpulab::kExitOk : gpulab::kExitCheckFailed;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "hal-demo: load HAL backends from shared objects the core never linked, reject the incompatible ones,\n"
      "test every declared capability and route FP32/FP16/BF16/FP8 work to the best capable backend."};
  gpulab::add_json_flag(app, o.common);
  gpulab::add_seed_flag(app, o.common);
  app.add_option("--backend-dir", o.backend_dir,
                 "Load backends from this directory only (default: GPULAB_HAL_BACKENDS, then "
                 "GPULAB_HAL_MANIFEST_DIR manifests, then this build's lib/hal-backends)");
  app.add_option("--backends", o.backends,
                 "Load only these backends, in this order, from the backend directory (e.g. cpu_ref,fast,stale)");
  app.add_option("--shape", o.shape, "Matmul shape MxNxK for the checks and the routing requests (each 0..1024: every backend runs it)")
      ->capture_default_str();
  app.add_flag("--no-gate", o.no_gate,
               "Trust declarations: do not quarantine a backend that fails a declared dtype (the war story)");
  app.add_flag("--devices", o.devices, "Also print the device line each backend reports (ABI 2.1 describe_device)");
  gpulab::add_metrics_out_flag(app, o.metrics_out, "hal_backends{state=\"loaded\"|\"rejected\"}");
  return gpulab::run_program("hal-demo", app, argc, argv, [&] { return run(o); });
}
