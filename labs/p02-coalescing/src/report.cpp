#include "coalescing/report.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <gpulab/cuda/device_report.hpp>
#include <gpulab/stats.hpp>
#include <gpulab/table.hpp>

#include "coalescing/bank_model.hpp"
#include "coalescing/sector_model.hpp"
#include "coalescing/transpose_model.hpp"

namespace coalescing {
namespace {

using gpulab::Table;
constexpr auto L = Table::Align::kLeft;

Row measured_row(std::string label, const Measured& m, double useful_bytes) {
  Row r;
  r.label = std::move(label);
  r.ok = m.verified;
  r.mismatch = m.mismatch;
  r.median_ms = gpulab::median(m.event_ms);
  r.gbs = r.median_ms > 0 ? useful_bytes / (r.median_ms * 1e-3) / 1e9 : 0.0;
  r.registers = m.registers;
  r.blocks_per_sm = m.blocks_per_sm;
  r.threads_per_block = m.threads_per_block;
  r.occupancy = m.occupancy;
  return r;
}

std::string check_cell(const Row& r) {
  if (r.skipped) return "n/a";
  return r.ok ? "PASS" : "FAIL";
}

std::string num(double v, int digits = 1) {
  return fmt::format("{:.{}f}", v, digits);
}

std::string pct(double fraction) {
  return fmt::format("{:.1f}", 100 * fraction);
}

std::string conflict(int degree) {
  return degree == 0 ? "-" : fmt::format("{}-way", degree);
}

}  // namespace

bool section_selected(const BenchOptions& o, std::string_view section) {
  return o.only.empty() || std::find(o.only.begin(), o.only.end(), section) != o.only.end();
}

bool BenchReport::all_checks_pass() const {
  for (const auto* rows : {&stride, &aos, &vector_copy, &transpose})
    for (const auto& r : *rows)
      if (!r.skipped && !r.ok) return false;
  return true;
}

bool BenchReport::all_gates_pass() const {
  return std::all_of(gates.begin(), gates.end(),
                     [](const Gate& g) { return !g.evaluated || g.pass; });
}

BenchReport run_bench(const BenchOptions& o) {
  BenchReport rep;
  rep.options = o;
  rep.device = open_device();
  const std::size_t floats = (o.buffer_mb << 20) / sizeof(float);

  if (section_selected(o, "stride")) {
    const AccessModel coalesced = strided_access(1);
    for (int s : kStrides) {
      const Measured m = run_strided_copy(floats, s, o.plan);
      // Useful bytes: each copied element is read once and written once.
      Row r = measured_row(fmt::format("{}", s), m,
                           2.0 * 4.0 * static_cast<double>(floats / static_cast<std::size_t>(s)));
      const AccessModel am = strided_access(static_cast<std::uint64_t>(s));
      r.model_note = fmt::format("{}", am.sectors);
      r.model_gbs = predicted_relative_bandwidth(am, coalesced);  // scaled by stride 1 below
      rep.stride.push_back(r);
    }
    const double base = rep.stride.front().gbs;
    for (auto& r : rep.stride) r.model_gbs *= base;
  }

  if (section_selected(o, "aos")) {
    const std::size_t points = floats;  // buffer_mb of x values; the AoS array is 3x that
    const Measured soa = run_field_sum(Layout::kSoA, points, o.plan);
    const Measured aos = run_field_sum(Layout::kAoS, points, o.plan);
    Row rs = measured_row("SoA", soa, 4.0 * static_cast<double>(points));
    Row ra = measured_row("AoS", aos, 4.0 * static_cast<double>(points));
    const AccessModel ms = strided_access(1), ma = aos_field_access(12);
    rs.model_note = fmt::format("{}", ms.sectors);
    ra.model_note = fmt::format("{}", ma.sectors);
    rs.model_gbs = rs.gbs;
    ra.model_gbs = rs.gbs * predicted_relative_bandwidth(ma, ms);
    rep.aos = {rs, ra};
  }

  if (section_selected(o, "float4")) {
    const std::size_t n4 = floats - floats % 4;
    Row scalar =
        measured_row("float", run_strided_copy(n4, 1, o.plan), 8.0 * static_cast<double>(n4));
    Row vec = measured_row("float4", run_float4_copy(n4, o.plan), 8.0 * static_cast<double>(n4));
    scalar.model_note = "4";
    vec.model_note = fmt::format("{}", distinct_sectors(warp_addresses(4, 4), 16));
    scalar.model_gbs = scalar.gbs;
    vec.model_gbs = scalar.gbs;  // the same sectors reach DRAM; only instruction count changes
    rep.vector_copy = {scalar, vec};
  }

  if (section_selected(o, "transpose")) {
    const double useful =
        2.0 * 4.0 * static_cast<double>(o.transpose_n) * static_cast<double>(o.transpose_n);
    for (const auto& tm : transpose_models(o.transpose_n)) {
      Row r;
      if (tm.kind == Transpose::kPaddedCpAsync && rep.device.cc_major < 8) {
        r.label = std::string(tm.name);
        r.skipped = true;
        r.skip_reason = fmt::format("cp.async needs sm_80+, this GPU is sm_{}{}",
                                    rep.device.cc_major, rep.device.cc_minor);
      } else {
        r = measured_row(std::string(tm.name), run_transpose(tm.kind, o.transpose_n, o.plan),
                         useful);
      }
      r.model_fraction = tm.fraction_of_copy();
      rep.transpose.push_back(r);
    }
    const double copy = rep.transpose.front().gbs;
    for (auto& r : rep.transpose) {
      r.fraction_of_copy = copy > 0 ? r.gbs / copy : 0.0;
      r.model_gbs = copy * r.model_fraction;
    }
    rep.gates.push_back(transpose_gate(rep.transpose));
  }
  return rep;
}

Gate transpose_gate(const std::vector<Row>& rows) {
  Gate g;
  g.name = "tiled+pad transpose >= 90% of copy";
  const auto find = [&](std::string_view label) -> const Row* {
    for (const auto& r : rows)
      if (r.label == label && !r.skipped) return &r;
    return nullptr;
  };
  const Row* copy = find("copy");
  const Row* padded = find("tiled+pad");
  if (copy == nullptr || padded == nullptr || copy->gbs <= 0) return g;
  g.evaluated = true;
  const double f = padded->gbs / copy->gbs;
  g.pass = copy->ok && padded->ok && f >= 0.9;
  g.detail = padded->ok ? fmt::format("{:.1f}%", 100 * f) : "the padded transpose failed its check";
  return g;
}

std::string render(const BenchReport& r) {
  const auto& d = r.device;
  std::string out;
  out += gpulab::cuda::device_line(d);
  out += fmt::format(
      "timing   CUDA events, median of {} after {} warm-up; GB/s = useful bytes / time\n",
      r.options.plan.reps, r.options.plan.warmup);
  auto fails = [&](const std::vector<Row>& rows, std::string_view section) {
    std::string f;
    for (const auto& row : rows)
      if (!row.skipped && !row.ok)
        f += fmt::format("FAIL {} {}: {}\n", section, row.label, row.mismatch);
    return f;
  };
  if (!r.stride.empty()) {
    out += fmt::format("\n== stride sweep: out[i*s] = in[i*s], {} MiB buffers ==\n",
                       r.options.buffer_mb);
    Table t;
    t.column("stride")
        .column("check", L)
        .column("sectors/request")
        .column("ms")
        .column("GB/s")
        .column("model GB/s");
    t.column("x slower");
    for (const auto& row : r.stride)
      t.row({row.label, check_cell(row), row.model_note, num(row.median_ms, 3), num(row.gbs),
             num(row.model_gbs), num(r.stride.front().gbs / row.gbs)});
    out += t.render();
    out += fmt::format("cliff: stride {} is {:.1f}x slower than stride 1 (sector model: {:.1f}x)\n",
                       r.stride.back().label, r.stride.front().gbs / r.stride.back().gbs,
                       r.stride.front().model_gbs / r.stride.back().model_gbs);
    out += fails(r.stride, "stride");
  }
  if (!r.aos.empty()) {
    out += fmt::format("\n== AoS vs SoA: sum of .x over {} points ==\n",
                       (r.options.buffer_mb << 20) / 4);
    Table t;
    t.column("layout", L)
        .column("check", L)
        .column("sectors/request")
        .column("ms")
        .column("GB/s")
        .column("model GB/s");
    for (const auto& row : r.aos)
      t.row({row.label, check_cell(row), row.model_note, num(row.median_ms, 3), num(row.gbs),
             num(row.model_gbs)});
    out += t.render();
    out += fmt::format("SoA / AoS: {:.2f}x (sector model: {:.2f}x)\n", r.aos[0].gbs / r.aos[1].gbs,
                       r.aos[0].model_gbs / r.aos[1].model_gbs);
    out += fails(r.aos, "aos");
  }
  if (!r.vector_copy.empty()) {
    out += fmt::format("\n== vectorised copy: {} MiB ==\n", r.options.buffer_mb);
    Table t;
    t.column("width", L)
        .column("check", L)
        .column("sectors/request")
        .column("ms")
        .column("GB/s")
        .column("model GB/s");
    for (const auto& row : r.vector_copy)
      t.row({row.label, check_cell(row), row.model_note, num(row.median_ms, 3), num(row.gbs),
             num(row.model_gbs)});
    out += t.render();
    out += fmt::format(
        "float4 / float: {:.2f}x (model: 1.00x at the DRAM; a quarter of the load instructions)\n",
        r.vector_copy[1].gbs / r.vector_copy[0].gbs);
    out += fails(r.vector_copy, "float4");
  }
  if (!r.transpose.empty()) {
    out += fmt::format("\n== transpose ladder: {} x {} floats, 32x32 tiles ==\n",
                       r.options.transpose_n, r.options.transpose_n);
    const auto models = transpose_models(r.options.transpose_n);
    Table t;
    t.column("kernel", L)
        .column("check", L)
        .column("ms")
        .column("GB/s")
        .column("% of copy")
        .column("model %");
    t.column("st sectors/req")
        .column("smem ld conflict")
        .column("regs")
        .column("blocks/SM")
        .column("occupancy %");
    for (std::size_t i = 0; i < r.transpose.size(); ++i) {
      const auto& row = r.transpose[i];
      const auto& m = models[i];
      if (row.skipped) {
        t.row({row.label, "n/a", "-", "-", "-", pct(m.fraction_of_copy()),
               std::to_string(m.store_sectors), conflict(m.smem_load_conflict), "-", "-", "-"});
        continue;
      }
      t.row({row.label, check_cell(row), num(row.median_ms, 3), num(row.gbs),
             pct(row.fraction_of_copy), pct(m.fraction_of_copy()), std::to_string(m.store_sectors),
             conflict(m.smem_load_conflict), std::to_string(row.registers),
             std::to_string(row.blocks_per_sm), num(100 * row.occupancy, 0)});
    }
    out += t.render();
    for (const auto& row : r.transpose)
      if (row.skipped) out += fmt::format("note: {} not run: {}\n", row.label, row.skip_reason);
    out += fails(r.transpose, "transpose");
  }
  if (!r.gates.empty()) {
    out += "\n";
    Table g;
    g.column("gate", L).column("verdict", L).column("measured", L);
    for (const auto& gate : r.gates)
      g.row({gate.name, gate.evaluated ? (gate.pass ? "PASS" : "FAIL") : "not run", gate.detail});
    out += g.render();
  }
  return out;
}

gpulab::Json to_json(const BenchReport& r) {
  gpulab::Json j;
  j["device"] = gpulab::cuda::device_json(r.device);
  j["buffer_mb"] = r.options.buffer_mb;
  j["transpose_n"] = r.options.transpose_n;
  j["reps"] = r.options.plan.reps;
  auto rows = [](const std::vector<Row>& rs) {
    gpulab::Json a = gpulab::Json::array();
    for (const auto& row : rs) {
      gpulab::Json o = {{"label", row.label}, {"skipped", row.skipped}};
      if (row.skipped) {
        o["reason"] = row.skip_reason;
      } else {
        o["ok"] = row.ok;
        o["median_ms"] = row.median_ms;
        o["gbs"] = row.gbs;
        o["model_gbs"] = row.model_gbs;
        o["registers"] = row.registers;
        o["blocks_per_sm"] = row.blocks_per_sm;
        o["occupancy"] = row.occupancy;
        if (!row.ok) o["mismatch"] = row.mismatch;
      }
      a.push_back(o);
    }
    return a;
  };
  j["stride"] = rows(r.stride);
  j["aos_soa"] = rows(r.aos);
  j["vector_copy"] = rows(r.vector_copy);
  j["transpose"] = rows(r.transpose);
  j["gates"] = gpulab::Json::array();
  for (const auto& g : r.gates)
    j["gates"].push_back(
        {{"gate", g.name}, {"evaluated", g.evaluated}, {"pass", g.pass}, {"detail", g.detail}});
  j["all_checks_pass"] = r.all_checks_pass();
  return j;
}

std::string render_model(int transpose_n) {
  std::string out;
  const AccessModel coalesced = strided_access(1);
  out += "== stride sweep: a warp loads 32 floats `stride` elements apart ==\n";
  Table s;
  s.column("stride")
      .column("sectors/request")
      .column("bytes fetched")
      .column("useful %")
      .column("model x slower");
  for (int st : kStrides) {
    const AccessModel m = strided_access(static_cast<std::uint64_t>(st));
    s.row({std::to_string(st), std::to_string(m.sectors), std::to_string(m.fetched_bytes),
           pct(m.efficiency()), num(1.0 / predicted_relative_bandwidth(m, coalesced))});
  }
  out += s.render();

  out += "\n== AoS vs SoA: a warp loads .x of struct {float x, y, z;} ==\n";
  Table a;
  a.column("layout", L)
      .column("lane stride B")
      .column("sectors/request")
      .column("useful %")
      .column("model x slower");
  const AccessModel aos = aos_field_access(12);
  a.row({"SoA", "4", std::to_string(coalesced.sectors), pct(coalesced.efficiency()), num(1.0)});
  a.row({"AoS", "12", std::to_string(aos.sectors), pct(aos.efficiency()),
         num(1.0 / predicted_relative_bandwidth(aos, coalesced))});
  out += a.render();

  out += "\n== float vs float4: bytes per warp request ==\n";
  Table v;
  v.column("width", L)
      .column("bytes/request")
      .column("sectors/request")
      .column("useful %")
      .column("requests per KiB");
  const std::size_t s4 = distinct_sectors(warp_addresses(4, 4), 16);
  v.row({"float", "128", std::to_string(coalesced.sectors), pct(coalesced.efficiency()), "8"});
  v.row({"float4", "512", std::to_string(s4), pct(512.0 / (32.0 * static_cast<double>(s4))), "2"});
  out += v.render();

  out += "\n== shared-memory banks: lane l reads tile[l][c] (a column) ==\n";
  Table b;
  b.column("tile", L).column("banks of lanes 0-3", L).column("conflict degree");
  for (int pitch : {32, 33}) {
    const auto addr = tile_column_addresses(pitch, 0);
    b.row({fmt::format("float[32][{}]", pitch),
           fmt::format("{} {} {} {}", bank_of(addr[0]), bank_of(addr[1]), bank_of(addr[2]),
                       bank_of(addr[3])),
           fmt::format("{}-way", transpose_read_conflict(pitch))});
  }
  out += b.render();

  out +=
      fmt::format("\n== transpose ladder, n = {}: sectors per warp request and bank conflicts ==\n",
                  transpose_n);
  Table t;
  t.column("kernel", L)
      .column("ld sectors")
      .column("st sectors")
      .column("smem st")
      .column("smem ld");
  t.column("model % of copy");
  for (const auto& m : transpose_models(transpose_n))
    t.row({std::string(m.name), std::to_string(m.load_sectors), std::to_string(m.store_sectors),
           conflict(m.smem_store_conflict), conflict(m.smem_load_conflict),
           pct(m.fraction_of_copy())});
  out += t.render();
  out +=
      "the DRAM-sector model cannot see bank conflicts: tiled and tiled+pad predict the same 100%; "
      "the smem ld\n"
      "column says which one the shared-memory pipe will slow down\n";
  return out;
}

gpulab::Json model_json(int transpose_n) {
  gpulab::Json j;
  const AccessModel coalesced = strided_access(1);
  j["stride"] = gpulab::Json::array();
  for (int st : kStrides) {
    const AccessModel m = strided_access(static_cast<std::uint64_t>(st));
    j["stride"].push_back({{"stride", st},
                           {"sectors", m.sectors},
                           {"efficiency", m.efficiency()},
                           {"relative_bandwidth", predicted_relative_bandwidth(m, coalesced)}});
  }
  const AccessModel aos = aos_field_access(12);
  j["aos_soa"] = {{"soa_sectors", coalesced.sectors},
                  {"aos_sectors", aos.sectors},
                  {"ratio", 1.0 / predicted_relative_bandwidth(aos, coalesced)}};
  j["banks"] = {{"pitch_32", transpose_read_conflict(32)},
                {"pitch_33", transpose_read_conflict(33)}};
  j["transpose"] = gpulab::Json::array();
  for (const auto& m : transpose_models(transpose_n))
    j["transpose"].push_back({{"kernel", m.name},
                              {"load_sectors", m.load_sectors},
                              {"store_sectors", m.store_sectors},
                              {"smem_store_conflict", m.smem_store_conflict},
                              {"smem_load_conflict", m.smem_load_conflict},
                              {"fraction_of_copy", m.fraction_of_copy()}});
  return j;
}

}  // namespace coalescing
