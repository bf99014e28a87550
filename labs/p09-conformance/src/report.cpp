#include "conformance/report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gpulab/table.hpp"

namespace conformance {
namespace {

std::string cap_label(Op op, DType t) {
  return op_has_dtype(op) ? fmt::format("{} {}", name_of(op), name_of(t))
                          : std::string(name_of(op));
}

std::string cell_text(const CellResult* c) {
  return c ? std::string(name_of(c->verdict)) : "-";
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? std::string(sep) : "") + parts[i];
  return out;
}

std::string declared_dtypes(const BackendInfo& info) {
  std::vector<std::string> names;
  for (DType t : kAllDTypes)
    if (std::find(info.dtypes.begin(), info.dtypes.end(), t) != info.dtypes.end())
      names.emplace_back(name_of(t));
  return names.empty() ? "-" : join(names, "|");
}

std::string declared_ops(const BackendInfo& info) {
  std::vector<std::string> names;
  for (Op op : kAllOps)
    if (info.declares(op)) names.emplace_back(name_of(op));
  return names.empty() ? "-" : join(names, "|");
}

}  // namespace

std::vector<std::string> Report::failed_capabilities() const {
  std::vector<std::string> out;
  for (const auto& b : backends)
    for (const auto& c : b.cells)
      if (c.verdict == Verdict::kFail) out.push_back(capability_id(b.info.name, c.op, c.dtype));
  return out;
}

int Report::passed_capabilities() const {
  int n = 0;
  for (const auto& b : backends)
    for (const auto& c : b.cells) n += c.verdict == Verdict::kPass ? 1 : 0;
  return n;
}

void assign_tiers(Report& report) {
  auto& entries = report.perf.entries;
  entries.resize(report.backends.size());
  for (std::size_t i = 0; i < report.backends.size(); ++i) {
    PerfEntry& e = entries[i];
    if (e.gflops && report.perf.roof.gflops > 0) e.ratio = *e.gflops / report.perf.roof.gflops;
    e.tier = classify_tier(report.backends[i].conformant(), e.ratio, report.perf.threshold);
  }
}

std::string render_text(const Report& r, const TextOptions& opts) {
  std::string out;
  out += fmt::format(
      "hal-conformance: {} backend{} under test (loaded by the HAL core, ABI {}), {} rejected by "
      "the loader\n",
      r.backends.size(), r.backends.size() == 1 ? "" : "s", r.core_abi, r.rejected.size());
  for (const auto& rej : r.rejected)
    out += fmt::format("  rejected {}: {}\n", rej.name, rej.reason);
  out += fmt::format("matrix: {} capabilities x {} cases per backend (shapes {}), seed {}\n",
                     r.capabilities.size(), r.cases_per_backend,
                     r.large ? "small + large" : "small; --large adds big ones", r.seed);
  out += "tolerance: |got - round(exact)| per element, exact computed in double:\n";
  std::vector<DType> seen;
  for (const auto& cap : r.capabilities)
    if (op_has_dtype(cap.first) && std::find(seen.begin(), seen.end(), cap.second) == seen.end())
      seen.push_back(cap.second);
  for (DType t : seen) out += fmt::format("  {:<5} {}\n", name_of(t), describe_rule(t));
  out += "\n";

  // Declarations: what each backend says it can do.
  gpulab::Table decl;
  decl.column("backend", gpulab::Table::Align::kLeft)
      .column("abi", gpulab::Table::Align::kLeft)
      .column("perf", gpulab::Table::Align::kRight)
      .column("dtypes", gpulab::Table::Align::kLeft)
      .column("ops", gpulab::Table::Align::kLeft)
      .column("status", gpulab::Table::Align::kLeft);
  for (const auto& b : r.backends)
    decl.row({b.info.name, b.info.abi, std::to_string(b.info.perf_hint), declared_dtypes(b.info),
              declared_ops(b.info), b.available() ? "tested" : b.info.unavailable});
  out += decl.render();
  out += "\n";

  // The matrix: one row per capability, one column per backend.
  gpulab::Table m;
  m.column("capability", gpulab::Table::Align::kLeft);
  for (const auto& b : r.backends) m.column(b.info.name, gpulab::Table::Align::kLeft);
  for (const auto& cap : r.capabilities) {
    std::vector<std::string> row{cap_label(cap.first, cap.second)};
    for (const auto& b : r.backends) row.push_back(cell_text(b.cell(cap.first, cap.second)));
    m.row(std::move(row));
  }
  out += m.render();

  // Failures: per capability (worst case), or every case with --verbose.
  bool any_fail = false;
  for (const auto& b : r.backends) {
    for (const auto& cell : b.cells) {
      if (cell.verdict != Verdict::kFail) continue;
      if (!any_fail) out += "\n";
      any_fail = true;
      std::vector<const CaseResult*> failed;
      for (const auto& cr : b.cases)
        if (cr.verdict == Verdict::kFail && cr.c.op == cell.op &&
            (!op_has_dtype(cell.op) || cr.c.dtype == cell.dtype))
          failed.push_back(&cr);
      if (opts.every_failure) {
        for (const CaseResult* cr : failed) out += failure_line(b.info.name, *cr) + "\n";
        continue;
      }
      // The first failing case is the smallest (shapes run small to large):
      // the one to debug first.
      const CaseResult* first = failed.front();
      out += fmt::format("FAIL {}: {} of {} shapes wrong; first {}: {}\n",
                         capability_id(b.info.name, cell.op, cell.dtype), cell.total - cell.passed,
                         cell.total, label(first->c.op, first->c.shape), first->detail);
    }
  }

  if (r.perf.run) {
    out += fmt::format(
        "\nperformance tier: F32 matmul {0}x{0}x{0}, reference {1} = {2:.1f} GFLOP/s, certified at "
        ">= {3:.0f}%\n",
        r.perf.size, r.perf.roof.label, r.perf.roof.gflops, r.perf.threshold * 100);
    if (!r.perf.roof.peer.empty())
      out += r.perf.roof.peer_fair
                 ? fmt::format("reference: {}\n", r.perf.roof.peer)
                 : fmt::format("WARNING: reference {}; it runs below what this CPU can do, so every "
                               "ratio to it flatters the backend (set OPENBLAS_CORETYPE before the run)\n",
                               r.perf.roof.peer);
    gpulab::Table p;
    p.column("backend", gpulab::Table::Align::kLeft)
        .column("GFLOP/s")
        .column("of ref")
        .column("tier", gpulab::Table::Align::kLeft);
    for (std::size_t i = 0; i < r.backends.size() && i < r.perf.entries.size(); ++i) {
      const PerfEntry& e = r.perf.entries[i];
      p.row({r.backends[i].info.name, e.gflops ? fmt::format("{:.2f}", *e.gflops) : "-",
             e.ratio ? fmt::format("{:.0f}%", *e.ratio * 100) : "-",
             e.note.empty() || e.tier != Tier::kNotMeasured ? std::string(name_of(e.tier))
                                                            : fmt::format("- ({})", e.note)});
    }
    out += p.render();
  }

  out += "\n";
  const auto failed = r.failed_capabilities();
  if (failed.empty()) {
    int tested = 0;
    for (const auto& b : r.backends) tested += b.available() ? 1 : 0;
    out += fmt::format("PASS: all {} declared capabilities of {} tested backend{} conform\n",
                       r.passed_capabilities(), tested, tested == 1 ? "" : "s");
  } else {
    out += fmt::format("FAIL: {} declared capabilit{} failed: {}\n", failed.size(),
                       failed.size() == 1 ? "y" : "ies", join(failed, ", "));
  }
  return out;
}

gpulab::Json to_json(const Report& r) {
  gpulab::Json doc;
  doc["program"] = "hal-conformance";
  doc["core_abi"] = r.core_abi;
  doc["seed"] = r.seed;
  doc["large"] = r.large;
  doc["cases_per_backend"] = r.cases_per_backend;
  gpulab::Json tol = gpulab::Json::object();
  for (DType t : kAllDTypes) {
    const ToleranceRule rule = rule_for(t);
    tol[std::string(name_of(t))] = {{"output_ulps", rule.output_ulps},
                                    {"reduce_unit", rule.reduce_unit},
                                    {"flush_below", rule.flush_below}};
  }
  doc["tolerance"] = tol;
  gpulab::Json rejected = gpulab::Json::array();
  for (const auto& rej : r.rejected)
    rejected.push_back({{"name", rej.name}, {"reason", rej.reason}});
  doc["rejected"] = rejected;
  gpulab::Json backends = gpulab::Json::array();
  for (std::size_t i = 0; i < r.backends.size(); ++i) {
    const auto& b = r.backends[i];
    gpulab::Json jb;
    jb["name"] = b.info.name;
    jb["abi"] = b.info.abi;
    jb["device"] = b.info.device;
    jb["perf_hint"] = b.info.perf_hint;
    gpulab::Json dts = gpulab::Json::array();
    for (DType t : b.info.dtypes) dts.push_back(name_of(t));
    gpulab::Json ops = gpulab::Json::array();
    for (Op op : b.info.ops) ops.push_back(name_of(op));
    jb["declared"] = {{"dtypes", dts}, {"ops", ops}, {"max_dim", b.info.max_dim}};
    jb["available"] = b.available();
    if (!b.available()) jb["unavailable"] = b.info.unavailable;
    jb["conformant"] = b.conformant();
    gpulab::Json cells = gpulab::Json::array();
    for (const auto& c : b.cells) {
      gpulab::Json jc;
      jc["capability"] = capability_id(b.info.name, c.op, c.dtype);
      jc["op"] = name_of(c.op);
      if (op_has_dtype(c.op)) jc["dtype"] = name_of(c.dtype);
      jc["verdict"] = name_of(c.verdict);
      jc["passed"] = c.passed;
      jc["total"] = c.total;
      cells.push_back(jc);
    }
    jb["capabilities"] = cells;
    gpulab::Json cases = gpulab::Json::array();
    for (const auto& cr : b.cases) {
      gpulab::Json jc;
      jc["op"] = name_of(cr.c.op);
      if (op_has_dtype(cr.c.op)) jc["dtype"] = name_of(cr.c.dtype);
      jc["shape"] = label(cr.c.op, cr.c.shape);
      jc["verdict"] = name_of(cr.verdict);
      if (cr.verdict == Verdict::kPass || cr.verdict == Verdict::kFail) {
        jc["elements"] = cr.check.elements;
        jc["bad"] = cr.check.bad;
        // worst |err| / bound: 1.0 is the edge of the tolerance (null: NaN or inexact buffer)
        if (std::isfinite(cr.check.worst_ratio))
          jc["worst_error_over_bound"] = cr.check.worst_ratio;
        else
          jc["worst_error_over_bound"] = nullptr;
      }
      if (!cr.detail.empty()) jc["detail"] = cr.detail;
      cases.push_back(jc);
    }
    jb["cases"] = cases;
    if (r.perf.run && i < r.perf.entries.size()) {
      const PerfEntry& e = r.perf.entries[i];
      gpulab::Json jp;
      jp["gflops"] = e.gflops ? gpulab::Json(*e.gflops) : gpulab::Json(nullptr);
      jp["of_reference"] = e.ratio ? gpulab::Json(*e.ratio) : gpulab::Json(nullptr);
      jp["tier"] = name_of(e.tier);
      if (!e.note.empty()) jp["note"] = e.note;
      jb["performance"] = jp;
    }
    backends.push_back(jb);
  }
  doc["backends"] = backends;
  if (r.perf.run) {
    doc["performance"] = {{"op", "matmul F32"},
                          {"size", r.perf.size},
                          {"reference", r.perf.roof.label},
                          {"reference_gflops", r.perf.roof.gflops},
                          {"reference_peer", r.perf.roof.peer},
                          {"reference_peer_fair", r.perf.roof.peer_fair},
                          {"threshold", r.perf.threshold}};
  }
  const auto failed = r.failed_capabilities();
  doc["failed_capabilities"] = failed;
  doc["passed_capabilities"] = r.passed_capabilities();
  doc["verdict"] = failed.empty() ? "PASS" : "FAIL";
  return doc;
}

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (u < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') {
          out += '?';  // not representable in XML 1.0, even as a character reference
        } else {
          out += ch;
        }
    }
  }
  return out;
}

std::string to_junit_xml(const Report& r) {
  // One <testsuite> per backend; one <testcase> per case that ran or was
  // skipped because the backend is unavailable; one skipped <testcase> per
  // undeclared capability (n/a), so CI shows it without counting every shape.
  struct Suite {
    std::string body;
    int tests = 0, failures = 0, skipped = 0;
  };
  std::string suites;
  int all_tests = 0, all_failures = 0, all_skipped = 0;
  for (std::size_t i = 0; i < r.backends.size(); ++i) {
    const auto& b = r.backends[i];
    Suite s;
    const std::string classname = xml_escape("hal-conformance." + b.info.name);
    for (const auto& cell : b.cells) {
      if (cell.verdict != Verdict::kNotDeclared) continue;
      ++s.tests;
      ++s.skipped;
      s.body += fmt::format(
          "    <testcase classname=\"{}\" name=\"{}\" time=\"0\">\n"
          "      <skipped message=\"not declared\"/>\n    </testcase>\n",
          classname, xml_escape(cap_label(cell.op, cell.dtype)));
    }
    for (const auto& cr : b.cases) {
      if (cr.verdict == Verdict::kNotDeclared && cr.detail == "not declared")
        continue;  // shown per capability
      ++s.tests;
      const std::string name = xml_escape(describe(cr.c));
      switch (cr.verdict) {
        case Verdict::kPass:
          s.body += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\"/>\n",
                                classname, name);
          break;
        case Verdict::kFail:
          ++s.failures;
          s.body += fmt::format(
              "    <testcase classname=\"{}\" name=\"{}\" time=\"0\">\n"
              "      <failure message=\"{}\" type=\"declared-but-wrong\">{}</failure>\n    "
              "</testcase>\n",
              classname, name, xml_escape(cr.detail), xml_escape(failure_line(b.info.name, cr)));
          break;
        case Verdict::kNotDeclared:
        case Verdict::kSkipped:
          ++s.skipped;
          s.body += fmt::format(
              "    <testcase classname=\"{}\" name=\"{}\" time=\"0\">\n"
              "      <skipped message=\"{}\"/>\n    </testcase>\n",
              classname, name, xml_escape(cr.detail));
          break;
      }
    }
    std::string props = fmt::format(
        "      <property name=\"abi\" value=\"{}\"/>\n"
        "      <property name=\"perf_hint\" value=\"{}\"/>\n"
        "      <property name=\"conformant\" value=\"{}\"/>\n",
        xml_escape(b.info.abi), b.info.perf_hint, b.conformant() ? "true" : "false");
    if (r.perf.run && i < r.perf.entries.size()) {
      const PerfEntry& e = r.perf.entries[i];
      props += fmt::format("      <property name=\"tier\" value=\"{}\"/>\n",
                           xml_escape(name_of(e.tier)));
      if (e.gflops)
        props += fmt::format("      <property name=\"gflops\" value=\"{:.3f}\"/>\n", *e.gflops);
    }
    suites += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" "
        "time=\"0\">\n"
        "    <properties>\n{}    </properties>\n{}  </testsuite>\n",
        xml_escape(b.info.name), s.tests, s.failures, s.skipped, props, s.body);
    all_tests += s.tests;
    all_failures += s.failures;
    all_skipped += s.skipped;
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"hal-conformance\" tests=\"{}\" failures=\"{}\" errors=\"0\" "
      "skipped=\"{}\" "
      "time=\"0\">\n{}</testsuites>\n",
      all_tests, all_failures, all_skipped, suites);
}

}  // namespace conformance
