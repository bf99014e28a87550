// What hal-demo prints: the walkthrough as the curriculum's Lab 01 transcript, or as JSON.
#include "hal/walkthrough_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

namespace gpulab::hal {

namespace {

std::string rejection_text(const Rejection& r) {
  std::string s = r.message;
  if (r.reason == RejectReason::kAbiMajorMismatch) return "(" + s + ") \u2014 ABI version guard works";
  return "(" + s + ")";
}

std::string verdict(const CheckResult& c) {
  if (!c.declared) return "n/a";
  return c.pass ? "PASS" : "FAIL";
}

gpulab::Json check_json(const CheckResult& c) {
  gpulab::Json j;
  j["result"] = verdict(c);
  if (c.declared) {
    j["worst_error_over_tolerance"] = std::isfinite(c.worst_ratio) ? gpulab::Json(c.worst_ratio) : gpulab::Json("inf");
    j["status"] = describe(c.status);
  }
  return j;
}

}  // namespace

gpulab::Json walkthrough_json(const Registry& reg, const Walkthrough& w, const WalkthroughOptions& wo) {
  gpulab::Json doc;
  doc["abi"] = fmt::format("{}.{}", GPULAB_HAL_ABI_MAJOR, GPULAB_HAL_ABI_MINOR);
  doc["loaded"] = gpulab::Json::array();
  for (const auto& b : reg.backends()) {
    gpulab::Json j;
    j["name"] = b->name();
    j["abi"] = fmt::format("{}.{}", b->abi_major(), b->abi_minor());
    j["dtypes"] = dtype_mask_string(b->dtypes());
    j["ops"] = op_mask_string(b->ops());
    j["perf_hint"] = b->perf_hint();
    j["max_dim"] = b->max_dim();
    j["device"] = b->device();
    j["source"] = source_name(b->source());
    j["path"] = b->path().string();
    doc["loaded"].push_back(j);
  }
  doc["rejected"] = gpulab::Json::array();
  for (const auto& r : reg.rejected())
    doc["rejected"].push_back({{"name", r.name},
                               {"reason", reject_reason_name(r.reason)},
                               {"message", r.message},
                               {"path", r.path.string()}});
  doc["shape"] = {wo.m, wo.n, wo.k};
  doc["conformance"] = gpulab::Json::array();
  for (const auto& b : w.backends) {
    gpulab::Json j;
    j["backend"] = b.name;
    j["FP32 matmul"] = check_json(b.fp32_matmul);
    for (const auto& c : b.other_dtypes) {
      j[fmt::format("{} matmul", request_name(c.dtype))] = check_json(c.matmul);
      if (c.softmax.declared) j[fmt::format("{} softmax", request_name(c.dtype))] = check_json(c.softmax);
    }
    for (const auto& c : b.layer_ops) j[fmt::format("FP32 {}", op_name(c.op))] = check_json(c.result);
    j["quarantined"] = b.quarantined;
    if (b.quarantined) j["quarantine_reason"] = b.quarantine_reason;
    doc["conformance"].push_back(j);
  }
  doc["routing"] = gpulab::Json::array();
  for (const auto& r : w.routes)
    doc["routing"].push_back({{"request", describe(r.request)},
                              {"backend", r.refused ? gpulab::Json(nullptr) : gpulab::Json(r.target)},
                              {"reason", r.reason}});
  doc["pass"] = w.fp32_all_pass() && w.layer_ops_all_pass();
  return doc;
}

std::string render_walkthrough(const Registry& reg, const Walkthrough& w, const WalkthroughOptions& wo,
                               bool show_devices) {
  std::string out;
  for (const auto& b : reg.backends()) {
    out += fmt::format("loaded backend: {:<10}(abi v{}.{}, dtypes={}, perf={})\n", b->name(), b->abi_major(), b->abi_minor(),
               dtype_mask_string(b->dtypes()), b->perf_hint());
    if (show_devices) out += fmt::format("    device: {}\n", b->device());
  }
  for (const auto& r : reg.rejected()) out += fmt::format("rejected backend: {:<8}{}\n", r.name, rejection_text(r));
  if (reg.backends().empty()) {
    out += fmt::format("\nno backend loaded: nothing to check or route\n");
    return out;
  }

  out += fmt::format("\n== conformance: matmul FP32 vs reference, all backends ==\n");
  for (const auto& b : w.backends) {
    out += fmt::format("  {:<8}: {}", b.name, verdict(b.fp32_matmul));
    if (b.fp32_matmul.declared && !b.fp32_matmul.pass) out += fmt::format("  ({})", describe(b.fp32_matmul.status));
    out += fmt::format("\n");
  }

  out += fmt::format("\n== declared dtypes beyond FP32: tested, not trusted ==\n");
  for (const auto& b : w.backends) {
    if (b.other_dtypes.empty()) continue;
    std::string cells;
    for (const auto& c : b.other_dtypes) {
      cells += fmt::format("{}{} matmul {}", cells.empty() ? "" : ", ", request_name(c.dtype), verdict(c.matmul));
      if (c.softmax.declared) cells += fmt::format(", {} softmax {}", request_name(c.dtype), verdict(c.softmax));
    }
    out += fmt::format("  {:<8}: {}\n", b.name, cells);
    if (b.quarantined) out += fmt::format("            -> quarantined, out of routing: {}\n", b.quarantine_reason);
  }

  out += fmt::format("\n== decoder-layer ops (ABI 2.2), FP32 vs reference ==\n");
  std::size_t with_ops = 0, ops_pass = 0;
  for (const auto& b : w.backends) {
    const Backend& be = *reg.find(b.name);
    std::string cells;
    bool any = false, all = true;
    for (const auto& c : b.layer_ops) {
      if (!c.result.declared) continue;
      any = true;
      all = all && c.result.pass;
      cells += fmt::format("{}{} {}", cells.empty() ? "" : ", ", op_name(c.op), verdict(c.result));
    }
    if (any) {
      ++with_ops;
      if (all) ++ops_pass;
    }
    out += fmt::format("  {:<8}: {}\n", b.name,
               any                     ? cells
               : be.abi_minor() >= 2u ? std::string("n/a (none declared)")
                                       : fmt::format("n/a (abi v{}.{} predates these ops)", be.abi_major(), be.abi_minor()));
  }

  out += fmt::format("\n== capability routing ({}x{}x{}) ==\n", wo.m, wo.n, wo.k);
  for (const auto& r : w.routes) {
    const std::string req = fmt::format("{:<4} {}", request_name(r.request.dtype), op_name(r.request.op));
    if (r.refused)
      out += fmt::format("  {} -> {:<10}cleanly refused: {}\n", req, "(none)", r.reason);
    else
      out += fmt::format("  {} -> {:<10}({})\n", req, r.target, r.reason);
  }

  std::size_t fp32_pass = 0;
  std::vector<std::string> quarantined;
  for (const auto& b : w.backends) {
    if (b.fp32_matmul.pass) ++fp32_pass;
    if (b.quarantined) quarantined.push_back(b.name);
  }
  const bool ok = w.fp32_all_pass() && w.layer_ops_all_pass();
  out += fmt::format("\n{}: {} of {} loaded backends pass FP32 matmul; {} of {} with ABI 2.2 ops pass them; {} rejected at "
             "load; quarantined: {}\n",
             ok ? "PASS" : "FAIL", fp32_pass, w.backends.size(), ops_pass, with_ops, reg.rejected().size(),
             quarantined.empty() ? std::string("none") : fmt::format("{}", fmt::join(quarantined, ", ")));
  return out;
}


bool walkthrough_passed(const Registry& reg, const Walkthrough& w) {
  return !reg.backends().empty() && w.fp32_all_pass() && w.layer_ops_all_pass();
}

}  // namespace gpulab::hal
