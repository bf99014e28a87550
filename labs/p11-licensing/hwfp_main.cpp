// hwfp: this machine's hardware fingerprint, as salted per-component hashes.
#include <fmt/core.h>

#include <algorithm>

#include "gpulab/cli.hpp"
#include "gpulab/json.hpp"
#include "gpulab/table.hpp"
#include "licensing/fingerprint_match.hpp"
#include "licensing/host_probe.hpp"
#include "licensing/secure_file.hpp"

using namespace licensing;

namespace {

std::string short_hash(std::string_view product, const Reading& r, const std::string& raw) {
  return component_hash(product, r.kind, raw).substr(0, 16);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "hwfp: hardware fingerprint of this machine for licence binding.\n"
      "Each component (machine-id, DMI UUID, CPU, NIC MACs, root disk serial, GPU UUIDs) is hashed with a\n"
      "product salt; raw identifiers are printed only with --show-raw."};
  gpulab::CommonOptions common;
  std::string root = "/", product = "gpulab-serve", out, compare;
  bool show_raw = false;
  int max_changed = -1;
  app.add_option("--root", root, "Read /etc, /proc and /sys under this directory (a fake tree for tests)")
      ->capture_default_str();
  app.add_option("--product", product, "Product name used as the hash salt")->capture_default_str();
  app.add_flag("--show-raw", show_raw, "Also print the raw identifiers (personal data: do not paste them anywhere)");
  app.add_option("--out", out, "Write the fingerprint file (input of licensectl issue --fingerprint)");
  app.add_option("--compare", compare, "Compare with a saved fingerprint file and explain the fuzzy match");
  app.add_option("--max-changed", max_changed,
                 "With --compare: components allowed to differ (default: (n-1)/3 of the saved n)")
      ->check(CLI::NonNegativeNumber);
  gpulab::add_json_flag(app, common);

  return gpulab::run_program("hwfp", app, argc, argv, [&] {
    if (!valid_product(product)) throw gpulab::UsageError("--product must match [a-z0-9][a-z0-9-]*");
    if (!std::filesystem::is_directory(root)) throw gpulab::UsageError("--root " + root + " is not a directory");
    const auto readings = probe_host(ProbeOptions{root, {}});
    const Fingerprint fp = fingerprint_of(product, readings);
    const auto available = static_cast<std::size_t>(
        std::count_if(readings.begin(), readings.end(), [](const Reading& r) { return r.ok(); }));

    std::optional<MatchResult> match;
    if (!compare.empty()) {
      const Fingerprint saved = parse_fingerprint(read_file_limited(compare, 64 * 1024));
      if (saved.product != product) {
        throw gpulab::UsageError(compare + " was taken for product '" + saved.product + "'; pass --product " + saved.product);
      }
      const std::size_t n = saved.components.size();
      const std::size_t k = max_changed >= 0 ? static_cast<std::size_t>(max_changed) : (n - 1) / 3;
      match = match_fingerprint(saved.components, fp.components, k);
    }
    if (!out.empty()) {
      if (fp.components.empty()) throw gpulab::RunError("no component could be read; nothing to write");
      write_file_atomic(out, format_fingerprint(fp), kPublicMode);
    }

    if (common.json) {
      gpulab::Json j;
      j["root"] = root;
      j["product"] = product;
      j["hash"] = "sha256(\"gpulab-fp-v1\" 0 product 0 kind 0 value)";
      j["components"] = gpulab::Json::array();
      for (const auto& r : readings) {
        gpulab::Json c;
        c["kind"] = r.kind;
        c["source"] = r.source;
        c["available"] = r.ok();
        c["hashes"] = gpulab::Json::array();
        for (const auto& raw : r.raw) c["hashes"].push_back(component_hash(product, r.kind, raw));
        if (show_raw) c["raw"] = r.raw;
        if (!r.note.empty()) c["note"] = r.note;
        j["components"].push_back(c);
      }
      j["fingerprint_size"] = fp.components.size();
      if (match) {
        j["compare"] = {{"file", compare},       {"licensed", match->licensed}, {"changed", match->changed()},
                        {"max_changed", match->max_changed}, {"match", match->ok()}, {"explain", match->explain()}};
      }
      gpulab::print_json(j);
    } else {
      fmt::print("hwfp: fingerprint of {} for product '{}' (SHA-256 per component, salted with the product)\n\n",
                 root, product);
      gpulab::Table t;
      t.column("component", gpulab::Table::Align::kLeft)
          .column("source", gpulab::Table::Align::kLeft)
          .column("status", gpulab::Table::Align::kLeft)
          .column("hash (first 16 hex) or why not", gpulab::Table::Align::kLeft);
      if (show_raw) t.column("raw value", gpulab::Table::Align::kLeft);
      for (const auto& r : readings) {
        if (!r.ok()) {
          t.row({r.kind, r.source, "unavailable", r.note});
          continue;
        }
        for (const auto& raw : r.raw) {
          std::vector<std::string> cells{r.kind, r.source, "ok", short_hash(product, r, raw)};
          if (show_raw) cells.push_back(raw);
          t.row(std::move(cells));
        }
      }
      fmt::print("{}\n", t.render());
      fmt::print("{} of {} component kinds available, {} hashes in the fingerprint\n", available, readings.size(),
                 fp.components.size());
      if (match) {
        fmt::print("compare with {}: {} -> {}\n", compare, match->explain(), match->ok() ? "MATCH" : "MISMATCH");
      }
      if (!out.empty()) fmt::print("wrote {}\n", out);
    }
    return match && !match->ok() ? gpulab::kExitCheckFailed : gpulab::kExitOk;
  });
}
