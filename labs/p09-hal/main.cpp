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

std::string rejection_text(const hal::Rejection& r) {
  std::string s = r.message;
  if (r.reason == hal::RejectReason::kAbiMajorMismatch) return "(" + s + ") \u2014 ABI version guard works";
  return "(" + s + ")";
}

std::string verdict(const hal::CheckResult& c) {
  if (!c.declared) return "n/a";
  return c.pass ? "PASS" : "FAIL";
}

gpulab::Json check_json(const hal::CheckResult& c) {
  gpulab::Json j;
  j["result"] = verdict(c);
  if (c.declared) {
    j["worst_error_over_tolerance"] = std::isfinite(c.worst_ratio) ? gpulab::Json(c.worst_ratio) : gpulab::Json("inf");
    j["status"] = hal::describe(c.status);
  }
  return j;
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
    gpulab::Json doc;
    doc["abi"] = fmt::format("{}.{}", GPULAB_HAL_ABI_MAJOR, GPULAB_HAL_ABI_MINOR);
    doc["loaded"] = gpulab::Json::array();
    for (const auto& b : reg.backends()) {
      gpulab::Json j;
      j["name"] = b->name();
      j["abi"] = fmt::format("{}.{}", b->abi_major(), b->abi_minor());
      j["dtypes"] = hal::dtype_mask_string(b->dtypes());
      j["ops"] = hal::op_mask_string(b->ops());
      j["perf_hint"] = b->perf_hint();
      j["max_dim"] = b->max_dim();
      j["device"] = b->device();
      j["source"] = hal::source_name(b->source());
      j["path"] = b->path().string();
      doc["loaded"].push_back(j);
    }
    doc["rejected"] = gpulab::Json::array();
    for (const auto& r : reg.rejected())
      doc["rejected"].push_back({{"name", r.name},
                                 {"reason", hal::reject_reason_name(r.reason)},
                                 {"message", r.message},
                                 {"path", r.path.string()}});
    doc["shape"] = {wo.m, wo.n, wo.k};
    doc["conformance"] = gpulab::Json::array();
    for (const auto& b : w.backends) {
      gpulab::Json j;
      j["backend"] = b.name;
      j["FP32 matmul"] = check_json(b.fp32_matmul);
      for (const auto& c : b.other_dtypes) {
        j[fmt::format("{} matmul", hal::request_name(c.dtype))] = check_json(c.matmul);
        if (c.softmax.declared) j[fmt::format("{} softmax", hal::request_name(c.dtype))] = check_json(c.softmax);
      }
      for (const auto& c : b.layer_ops) j[fmt::format("FP32 {}", hal::op_name(c.op))] = check_json(c.result);
      j["quarantined"] = b.quarantined;
      if (b.quarantined) j["quarantine_reason"] = b.quarantine_reason;
      doc["conformance"].push_back(j);
    }
    doc["routing"] = gpulab::Json::array();
    for (const auto& r : w.routes)
      doc["routing"].push_back({{"request", hal::describe(r.request)},
                                {"backend", r.refused ? gpulab::Json(nullptr) : gpulab::Json(r.target)},
                                {"reason", r.reason}});
    const bool pass = w.fp32_all_pass() && w.layer_ops_all_pass();
    doc["pass"] = pass;
    gpulab::print_json(doc);
    return pass ? gpulab::kExitOk : gpulab::kExitCheckFailed;
  }

  for (const auto& b : reg.backends()) {
    fmt::print("loaded backend: {:<10}(abi v{}.{}, dtypes={}, perf={})\n", b->name(), b->abi_major(), b->abi_minor(),
               hal::dtype_mask_string(b->dtypes()), b->perf_hint());
    if (o.devices) fmt::print("    device: {}\n", b->device());
  }
  for (const auto& r : reg.rejected()) fmt::print("rejected backend: {:<8}{}\n", r.name, rejection_text(r));
  if (reg.backends().empty()) {
    fmt::print("\nno backend loaded: nothing to check or route\n");
    return gpulab::kExitCheckFailed;
  }

  fmt::print("\n== conformance: matmul FP32 vs reference, all backends ==\n");
  for (const auto& b : w.backends) {
    fmt::print("  {:<8}: {}", b.name, verdict(b.fp32_matmul));
    if (b.fp32_matmul.declared && !b.fp32_matmul.pass) fmt::print("  ({})", hal::describe(b.fp32_matmul.status));
    fmt::print("\n");
  }

  fmt::print("\n== declared dtypes beyond FP32: tested, not trusted ==\n");
  for (const auto& b : w.backends) {
    if (b.other_dtypes.empty()) continue;
    std::string cells;
    for (const auto& c : b.other_dtypes) {
      cells += fmt::format("{}{} matmul {}", cells.empty() ? "" : ", ", hal::request_name(c.dtype), verdict(c.matmul));
      if (c.softmax.declared) cells += fmt::format(", {} softmax {}", hal::request_name(c.dtype), verdict(c.softmax));
    }
    fmt::print("  {:<8}: {}\n", b.name, cells);
    if (b.quarantined) fmt::print("            -> quarantined, out of routing: {}\n", b.quarantine_reason);
  }

  fmt::print("\n== decoder-layer ops (ABI 2.2), FP32 vs reference ==\n");
  std::size_t with_ops = 0, ops_pass = 0;
  for (const auto& b : w.backends) {
    const hal::Backend& be = *reg.find(b.name);
    std::string cells;
    bool any = false, all = true;
    for (const auto& c : b.layer_ops) {
      if (!c.result.declared) continue;
      any = true;
      all = all && c.result.pass;
      cells += fmt::format("{}{} {}", cells.empty() ? "" : ", ", hal::op_name(c.op), verdict(c.result));
    }
    if (any) {
      ++with_ops;
      if (all) ++ops_pass;
    }
    fmt::print("  {:<8}: {}\n", b.name,
               any                     ? cells
               : be.abi_minor() >= 2u ? std::string("n/a (none declared)")
                                       : fmt::format("n/a (abi v{}.{} predates these ops)", be.abi_major(), be.abi_minor()));
  }

  fmt::print("\n== capability routing ({}x{}x{}) ==\n", wo.m, wo.n, wo.k);
  for (const auto& r : w.routes) {
    const std::string req = fmt::format("{:<4} {}", hal::request_name(r.request.dtype), hal::op_name(r.request.op));
    if (r.refused)
      fmt::print("  {} -> {:<10}cleanly refused: {}\n", req, "(none)", r.reason);
    else
      fmt::print("  {} -> {:<10}({})\n", req, r.target, r.reason);
  }

  std::size_t fp32_pass = 0;
  std::vector<std::string> quarantined;
  for (const auto& b : w.backends) {
    if (b.fp32_matmul.pass) ++fp32_pass;
    if (b.quarantined) quarantined.push_back(b.name);
  }
  const bool ok = w.fp32_all_pass() && w.layer_ops_all_pass();
  fmt::print("\n{}: {} of {} loaded backends pass FP32 matmul; {} of {} with ABI 2.2 ops pass them; {} rejected at "
             "load; quarantined: {}\n",
             ok ? "PASS" : "FAIL", fp32_pass, w.backends.size(), ops_pass, with_ops, reg.rejected().size(),
             quarantined.empty() ? std::string("none") : fmt::format("{}", fmt::join(quarantined, ", ")));
  return ok ? gpulab::kExitOk : gpulab::kExitCheckFailed;
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
