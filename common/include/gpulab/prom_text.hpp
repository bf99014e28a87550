// Prometheus text exposition format 0.0.4: build metric families (gauge,
// counter, histogram, untyped), render them with HELP/TYPE lines, escaped
// label values and a stable order, parse and validate such text, and write it
// to a file atomically (the node-exporter textfile-collector pattern).
//
// One place for the format: labs' `--metrics-out FILE` and gpu-exporter's
// `/metrics` both render through this.
//
//   gpulab::prom::Exposition e;
//   e.gauge("allocator_reserved_bytes", "Bytes the allocator holds from the device.")
//       .set({}, 1048576);
//   e.counter("allocator_oom_total", "Allocations that failed.").inc({}, 1);
//   auto& h = e.histogram("serving_ttft_seconds", "Time to first token.", {0.1, 0.3, 1});
//   h.observe({{"model", "m"}}, 0.25);
//   gpulab::prom::write_file_atomic("out.prom", e.render());
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpulab/expected.hpp"

namespace gpulab::prom {

// The Content-Type of a 0.0.4 exposition served over HTTP.
inline constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

enum class MetricType { kGauge, kCounter, kHistogram, kUntyped };
[[nodiscard]] std::string_view type_name(MetricType type);

// Label name/value pairs, in the order they are printed.
using Labels = std::vector<std::pair<std::string, std::string>>;

// Escaping as the format defines it: label values escape \ " and newline;
// HELP text escapes \ and newline.
[[nodiscard]] std::string escape_label_value(std::string_view value);
[[nodiscard]] std::string escape_help(std::string_view help);
// Shortest text that reads back as the same double; "+Inf", "-Inf", "NaN".
[[nodiscard]] std::string format_value(double value);

[[nodiscard]] bool valid_metric_name(std::string_view name);  // [a-zA-Z_:][a-zA-Z0-9_:]*
[[nodiscard]] bool valid_label_name(std::string_view name);   // [a-zA-Z_][a-zA-Z0-9_]*, not __*

// Orders label sets for output: pair by pair, names as text, values that are
// both decimal integers numerically (so gpu="2" comes before gpu="10").
[[nodiscard]] bool labels_less(const Labels& a, const Labels& b);

// One metric family: name, help, type and one series per label set.
// Misuse (bad names, a counter going down, observe() on a gauge) throws
// std::invalid_argument: it is a bug in the caller, not bad input.
class Family {
 public:
  struct Series {
    double value = 0;                // gauge, counter, untyped
    std::vector<double> cumulative;  // histogram: one per bound, then +Inf (== count)
    double sum = 0;                  // histogram
  };

  Family(std::string name, std::string help, MetricType type,
         std::vector<double> upper_bounds = {});

  // Gauge, counter, untyped: set the value of one series (a counter read from a
  // cumulative source, e.g. NVML's energy counter, is set, not incremented).
  Family& set(const Labels& labels, double value);
  // Gauge, counter, untyped: add `delta` (a counter refuses delta < 0).
  Family& inc(const Labels& labels, double delta = 1);
  // Histogram: count one observation.
  Family& observe(const Labels& labels, double value);
  // Histogram: set a whole series from cumulative bucket counts (one per bound,
  // then the +Inf bucket, which is the count) and the sum. Counts must not decrease.
  Family& set_histogram(const Labels& labels, std::vector<double> cumulative, double sum);

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const std::string& help() const { return help_; }
  [[nodiscard]] MetricType type() const { return type_; }
  [[nodiscard]] const std::vector<double>& upper_bounds() const { return bounds_; }
  [[nodiscard]] std::size_t series_count() const { return series_.size(); }
  // The series with exactly these labels, or nullptr.
  [[nodiscard]] const Series* find(const Labels& labels) const;
  [[nodiscard]] std::vector<std::pair<Labels, Series>> series() const;

  // "# HELP", "# TYPE", then the samples, series in labels_less order; a
  // histogram prints name_bucket{...,le="..."} for every bound and "+Inf",
  // then name_sum and name_count.
  void render(std::string& out) const;

 private:
  Series& at(const Labels& labels);
  struct LabelsLess {
    bool operator()(const Labels& a, const Labels& b) const { return labels_less(a, b); }
  };
  std::string name_;
  std::string help_;
  MetricType type_;
  std::vector<double> bounds_;
  std::map<Labels, Series, LabelsLess> series_;
};

// A set of families rendered together, in name order.
class Exposition {
 public:
  // Returns the family of that name, creating it on first use. Asking again
  // with another type (or other histogram bounds) throws std::invalid_argument.
  Family& gauge(const std::string& name, const std::string& help);
  Family& counter(const std::string& name, const std::string& help);
  Family& histogram(const std::string& name, const std::string& help,
                    std::vector<double> upper_bounds);
  Family& untyped(const std::string& name, const std::string& help);
  Family& family(const std::string& name, const std::string& help, MetricType type,
                 std::vector<double> upper_bounds = {});

  // Adds every series of `other`; a family of the same name must have the same
  // type (and bounds) and a series already present is replaced. Throws
  // std::invalid_argument on a type clash, leaving *this unchanged.
  void merge(const Exposition& other);

  [[nodiscard]] const Family* find(std::string_view name) const;
  [[nodiscard]] std::vector<std::string> names() const;
  [[nodiscard]] bool empty() const { return families_.empty(); }

  // The whole exposition; ends with '\n' unless empty.
  [[nodiscard]] std::string render() const;

 private:
  std::map<std::string, Family, std::less<>> families_;
};

// Parses and validates a 0.0.4 exposition: HELP/TYPE lines before their samples,
// a family's samples together, no duplicate series, histograms with increasing
// le bounds, a +Inf bucket equal to _count, non-decreasing cumulative counts,
// and no timestamps (a textfile must not carry them, as with node-exporter).
// The error says "line N: what".
[[nodiscard]] Expected<Exposition> parse(std::string_view text);

// Writes `content` to `path` with mode 0644 through gpulab::write_file (output_file.hpp): a
// reader sees the old file or the new one, never half of one, and a device stays a device.
// Throws std::runtime_error with the one-line message on failure.
void write_file_atomic(const std::filesystem::path& path, std::string_view content);

}  // namespace gpulab::prom
