#include "gpulab/prom_text.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace prom = gpulab::prom;
namespace fs = std::filesystem;

TEST(PromText, EscapesLabelValuesAndHelp) {
  EXPECT_EQ(prom::escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(prom::escape_help("a\\b\"c\nd"), "a\\\\b\"c\\nd");
}

TEST(PromText, FormatsValuesSoTheyReadBack) {
  EXPECT_EQ(prom::format_value(3), "3");
  EXPECT_EQ(prom::format_value(0.3), "0.3");
  EXPECT_EQ(prom::format_value(1e21), "1e+21");
  EXPECT_EQ(prom::format_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(prom::format_value(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(prom::format_value(std::nan("")), "NaN");
}

TEST(PromText, RendersGaugeAndCounterWithHelpTypeAndStableOrder) {
  prom::Exposition e;
  e.gauge("zeta_bytes", "Last family.").set({}, 1);
  auto& c = e.counter("alpha_total", "Path with \\ and\nnewline.");
  c.inc({{"gpu", "10"}}, 2).inc({{"gpu", "2"}}, 1).inc({{"gpu", "2"}}, 0.5);
  c.set({{"gpu", "x\"y"}}, 4);
  EXPECT_EQ(e.render(),
            "# HELP alpha_total Path with \\\\ and\\nnewline.\n"
            "# TYPE alpha_total counter\n"
            "alpha_total{gpu=\"2\"} 1.5\n"
            "alpha_total{gpu=\"10\"} 2\n"
            "alpha_total{gpu=\"x\\\"y\"} 4\n"
            "# HELP zeta_bytes Last family.\n"
            "# TYPE zeta_bytes gauge\n"
            "zeta_bytes 1\n");
}

TEST(PromText, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  prom::Exposition e;
  auto& h = e.histogram("ttft_seconds", "TTFT.", {0.1, 0.3, 1});
  for (double v : {0.05, 0.2, 0.25, 0.3, 5.0}) h.observe({{"m", "a"}}, v);
  EXPECT_EQ(e.render(),
            "# HELP ttft_seconds TTFT.\n"
            "# TYPE ttft_seconds histogram\n"
            "ttft_seconds_bucket{m=\"a\",le=\"0.1\"} 1\n"
            "ttft_seconds_bucket{m=\"a\",le=\"0.3\"} 4\n"
            "ttft_seconds_bucket{m=\"a\",le=\"1\"} 4\n"
            "ttft_seconds_bucket{m=\"a\",le=\"+Inf\"} 5\n"
            "ttft_seconds_sum{m=\"a\"} 5.8\n"
            "ttft_seconds_count{m=\"a\"} 5\n");
}

TEST(PromText, MisuseThrows) {
  prom::Exposition e;
  EXPECT_THROW(e.gauge("bad-name", "x"), std::invalid_argument);
  EXPECT_THROW(e.gauge("g", "x").set({{"__reserved", "1"}}, 1), std::invalid_argument);
  EXPECT_THROW(e.gauge("g", "x").set({{"a", "1"}, {"a", "2"}}, 1), std::invalid_argument);
  EXPECT_THROW(e.counter("g", "x"), std::invalid_argument);  // already a gauge
  EXPECT_THROW(e.counter("c_total", "x").inc({}, -1), std::invalid_argument);
  EXPECT_THROW(e.histogram("h", "x", {1, 0.5}), std::invalid_argument);
  EXPECT_THROW(e.histogram("h2", "x", {1}).observe({{"le", "1"}}, 1), std::invalid_argument);
  EXPECT_THROW(e.gauge("g", "x").observe({}, 1), std::invalid_argument);
  EXPECT_THROW(e.histogram("h3", "x", {1}).set_histogram({}, {2, 1}, 0), std::invalid_argument);
}

TEST(PromText, ParseRoundTripsWhatRenderWrites) {
  prom::Exposition e;
  e.gauge("g", "A gauge \\ with\nnewline.").set({{"a", "q\"\\\n"}, {"b", "2"}}, -1.25);
  e.counter("c_total", "C.").set({}, 7);
  auto& h = e.histogram("h_seconds", "H.", {0.5, 2});
  h.observe({{"x", "1"}}, 0.1).observe({{"x", "1"}}, 3).observe({{"x", "0"}}, 1);
  const std::string text = e.render();
  const auto parsed = prom::parse(text);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed.value().render(), text);
}

TEST(PromText, ParseRejectsMalformedTextWithTheLine) {
  const auto err = [](std::string_view text) {
    const auto r = prom::parse(text);
    return r.ok() ? std::string("(accepted)") : r.error().message;
  };
  EXPECT_EQ(err("# TYPE a gauge\na 1\nb{x=\"1} 2\n"), "line 3: label 'x': unterminated value");
  EXPECT_EQ(err("a 1 1700000000\n"), "line 1: timestamps are not supported in a textfile");
  EXPECT_EQ(err("a one\n"), "line 1: invalid value 'one'");
  EXPECT_EQ(err("a 1\na 2\n"), "a: duplicate series");
  EXPECT_EQ(err("a 1\nb 1\na 2\n"), "line 3: a: family appears twice");
  EXPECT_EQ(err("a 1\n# TYPE a gauge\n"), "line 2: a: TYPE after its samples");
  EXPECT_EQ(err("# TYPE s summary\n"), "line 1: s: summaries are not supported");
  EXPECT_EQ(err("# TYPE c_total counter\nc_total -1\n"), "c_total: a counter cannot be -1");
  EXPECT_EQ(err("# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n"),
            "h: histogram series without an le=\"+Inf\" bucket");
  EXPECT_EQ(err("# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\n"
                "h_sum 1\nh_count 1\n"),
            "h: cumulative bucket counts decrease");
  EXPECT_EQ(err("# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_sum 1\nh_count 1\n"),
            "h: le=\"+Inf\" bucket 2 differs from _count 1");
  EXPECT_EQ(err("a{1x=\"1\"} 1\n"), "line 1: invalid label name '1x'");
  EXPECT_EQ(err(std::string_view("a 1\0\n", 5)), "line 1: NUL byte");
  // Comments, blank lines, CRLF and untyped samples are fine.
  const auto ok = prom::parse("# a comment\n\nfoo{a=\"b\"} 1\r\n");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(ok.value().render(), "# HELP foo \n# TYPE foo untyped\nfoo{a=\"b\"} 1\n");
}

TEST(PromText, MergeAddsSeriesAndRefusesTypeClashes) {
  prom::Exposition a;
  a.gauge("g", "G.").set({{"src", "a"}}, 1);
  prom::Exposition b;
  b.gauge("g", "G.").set({{"src", "b"}}, 2);
  b.counter("c_total", "C.").set({}, 3);
  a.merge(b);
  EXPECT_EQ(a.find("g")->series_count(), 2U);
  EXPECT_NE(a.find("c_total"), nullptr);
  prom::Exposition clash;
  clash.counter("g", "G.");
  EXPECT_THROW(a.merge(clash), std::invalid_argument);
  EXPECT_EQ(a.find("g")->type(), prom::MetricType::kGauge);
}

TEST(PromText, WriteFileAtomicReplacesAndLeavesNoTempFile) {
  const fs::path dir = fs::temp_directory_path() / ("prom_text_test." + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path file = dir / "lab.prom";
  prom::write_file_atomic(file, "a 1\n");
  prom::write_file_atomic(file, "a 2\n");
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), "a 2\n");
  EXPECT_EQ(fs::status(file).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                fs::perms::others_read);
  int entries = 0;
  for ([[maybe_unused]] const auto& ent : fs::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 1);
  EXPECT_THROW(prom::write_file_atomic(dir / "missing" / "x.prom", "a 1\n"), std::runtime_error);
  fs::remove_all(dir);
}
