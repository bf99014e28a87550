#include "gpulab/prom_text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <stdexcept>
#include <system_error>

#include "gpulab/output_file.hpp"

namespace gpulab::prom {

std::string_view type_name(MetricType type) {
  switch (type) {
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kCounter:
      return "counter";
    case MetricType::kHistogram:
      return "histogram";
    case MetricType::kUntyped:
      return "untyped";
  }
  return "untyped";
}

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string escape_help(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", value);
}

namespace {

bool is_alpha_(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

bool all_digits(std::string_view s) {
  return !s.empty() && s.size() < 19 && std::all_of(s.begin(), s.end(), is_digit);
}

// -1, 0, 1.
int compare_values(const std::string& a, const std::string& b) {
  if (all_digits(a) && all_digits(b)) {
    const auto x = std::stoull(a);
    const auto y = std::stoull(b);
    if (x != y) return x < y ? -1 : 1;
  }
  const int c = a.compare(b);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

}  // namespace

bool valid_metric_name(std::string_view name) {
  if (name.empty() || !(is_alpha_(name[0]) || name[0] == ':')) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return is_alpha_(c) || is_digit(c) || c == ':'; });
}

bool valid_label_name(std::string_view name) {
  if (name.empty() || !is_alpha_(name[0])) return false;
  if (name.size() >= 2 && name[0] == '_' && name[1] == '_') return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return is_alpha_(c) || is_digit(c); });
}

bool labels_less(const Labels& a, const Labels& b) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i].first != b[i].first) return a[i].first < b[i].first;
    const int c = compare_values(a[i].second, b[i].second);
    if (c != 0) return c < 0;
  }
  return a.size() < b.size();
}

// ---------------------------------------------------------------- Family

Family::Family(std::string name, std::string help, MetricType type,
               std::vector<double> upper_bounds)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      bounds_(std::move(upper_bounds)) {
  if (!valid_metric_name(name_)) {
    throw std::invalid_argument(fmt::format("invalid metric name '{}'", name_));
  }
  if (type_ == MetricType::kHistogram) {
    if (!bounds_.empty() && std::isinf(bounds_.back()) && bounds_.back() > 0) bounds_.pop_back();
    for (std::size_t i = 0; i < bounds_.size(); ++i) {
      if (!std::isfinite(bounds_[i]) || (i > 0 && !(bounds_[i] > bounds_[i - 1]))) {
        throw std::invalid_argument(
            fmt::format("histogram {}: bucket bounds must be finite and increasing", name_));
      }
    }
  } else if (!bounds_.empty()) {
    throw std::invalid_argument(fmt::format("{}: only a histogram has bucket bounds", name_));
  }
}

Family::Series& Family::at(const Labels& labels) {
  auto it = series_.find(labels);
  if (it != series_.end()) return it->second;
  std::set<std::string_view> seen;
  for (const auto& [k, v] : labels) {
    if (!valid_label_name(k) || (type_ == MetricType::kHistogram && k == "le")) {
      throw std::invalid_argument(fmt::format("{}: invalid label name '{}'", name_, k));
    }
    if (!seen.insert(k).second) {
      throw std::invalid_argument(fmt::format("{}: label '{}' given twice", name_, k));
    }
  }
  Series s;
  if (type_ == MetricType::kHistogram) s.cumulative.assign(bounds_.size() + 1, 0.0);
  return series_.emplace(labels, std::move(s)).first->second;
}

Family& Family::set(const Labels& labels, double value) {
  if (type_ == MetricType::kHistogram) {
    throw std::invalid_argument(fmt::format("{}: set() on a histogram", name_));
  }
  if (type_ == MetricType::kCounter && !(value >= 0)) {
    throw std::invalid_argument(fmt::format("{}: a counter cannot be {}", name_, value));
  }
  at(labels).value = value;
  return *this;
}

Family& Family::inc(const Labels& labels, double delta) {
  if (type_ == MetricType::kHistogram) {
    throw std::invalid_argument(fmt::format("{}: inc() on a histogram", name_));
  }
  if (type_ == MetricType::kCounter && !(delta >= 0)) {
    throw std::invalid_argument(fmt::format("{}: a counter cannot go down", name_));
  }
  at(labels).value += delta;
  return *this;
}

Family& Family::observe(const Labels& labels, double value) {
  if (type_ != MetricType::kHistogram) {
    throw std::invalid_argument(fmt::format("{}: observe() on a {}", name_, type_name(type_)));
  }
  Series& s = at(labels);
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    if (value <= bounds_[i]) s.cumulative[i] += 1;
  }
  s.cumulative.back() += 1;
  s.sum += value;
  return *this;
}

Family& Family::set_histogram(const Labels& labels, std::vector<double> cumulative, double sum) {
  if (type_ != MetricType::kHistogram) {
    throw std::invalid_argument(
        fmt::format("{}: set_histogram() on a {}", name_, type_name(type_)));
  }
  if (cumulative.size() != bounds_.size() + 1) {
    throw std::invalid_argument(fmt::format("{}: {} bucket counts for {} buckets", name_,
                                            cumulative.size(), bounds_.size() + 1));
  }
  for (std::size_t i = 0; i < cumulative.size(); ++i) {
    if (!(cumulative[i] >= 0) || (i > 0 && cumulative[i] < cumulative[i - 1])) {
      throw std::invalid_argument(
          fmt::format("{}: cumulative bucket counts must be >= 0 and non-decreasing", name_));
    }
  }
  Series& s = at(labels);
  s.cumulative = std::move(cumulative);
  s.sum = sum;
  return *this;
}

const Family::Series* Family::find(const Labels& labels) const {
  auto it = series_.find(labels);
  return it == series_.end() ? nullptr : &it->second;
}

std::vector<std::pair<Labels, Family::Series>> Family::series() const {
  return {series_.begin(), series_.end()};
}

namespace {

void append_sample(std::string& out, std::string_view name, const Labels& labels,
                   const std::pair<std::string_view, std::string>* extra, double value) {
  out += name;
  if (!labels.empty() || extra != nullptr) {
    out += '{';
    bool first = true;
    for (const auto& [k, v] : labels) {
      if (!first) out += ',';
      first = false;
      out += k;
      out += "=\"";
      out += escape_label_value(v);
      out += '"';
    }
    if (extra != nullptr) {
      if (!first) out += ',';
      out += extra->first;
      out += "=\"";
      out += extra->second;
      out += '"';
    }
    out += '}';
  }
  out += ' ';
  out += format_value(value);
  out += '\n';
}

}  // namespace

void Family::render(std::string& out) const {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name_, escape_help(help_), name_,
                     type_name(type_));
  for (const auto& [labels, s] : series_) {
    if (type_ != MetricType::kHistogram) {
      append_sample(out, name_, labels, nullptr, s.value);
      continue;
    }
    const std::string bucket = name_ + "_bucket";
    for (std::size_t i = 0; i <= bounds_.size(); ++i) {
      const std::pair<std::string_view, std::string> le{
          "le", i < bounds_.size() ? format_value(bounds_[i]) : "+Inf"};
      append_sample(out, bucket, labels, &le, s.cumulative[i]);
    }
    append_sample(out, name_ + "_sum", labels, nullptr, s.sum);
    append_sample(out, name_ + "_count", labels, nullptr, s.cumulative.back());
  }
}

// ---------------------------------------------------------------- Exposition

Family& Exposition::family(const std::string& name, const std::string& help, MetricType type,
                           std::vector<double> upper_bounds) {
  auto it = families_.find(name);
  if (it == families_.end()) {
    return families_.emplace(name, Family(name, help, type, std::move(upper_bounds))).first->second;
  }
  Family& f = it->second;
  if (f.type() != type) {
    throw std::invalid_argument(
        fmt::format("{} is a {}, not a {}", name, type_name(f.type()), type_name(type)));
  }
  if (type == MetricType::kHistogram) {
    const Family probe(name, help, type, std::move(upper_bounds));
    if (probe.upper_bounds() != f.upper_bounds()) {
      throw std::invalid_argument(fmt::format("histogram {}: other bucket bounds", name));
    }
  }
  return f;
}

Family& Exposition::gauge(const std::string& name, const std::string& help) {
  return family(name, help, MetricType::kGauge);
}
Family& Exposition::counter(const std::string& name, const std::string& help) {
  return family(name, help, MetricType::kCounter);
}
Family& Exposition::histogram(const std::string& name, const std::string& help,
                              std::vector<double> upper_bounds) {
  return family(name, help, MetricType::kHistogram, std::move(upper_bounds));
}
Family& Exposition::untyped(const std::string& name, const std::string& help) {
  return family(name, help, MetricType::kUntyped);
}

void Exposition::merge(const Exposition& other) {
  for (const auto& [name, f] : other.families_) {
    const Family* mine = find(name);
    if (mine != nullptr && (mine->type() != f.type() || mine->upper_bounds() != f.upper_bounds())) {
      throw std::invalid_argument(fmt::format("{}: a {} here, a {} in the merged exposition", name,
                                              type_name(mine->type()), type_name(f.type())));
    }
  }
  for (const auto& [name, f] : other.families_) {
    Family& mine = family(name, f.help(), f.type(), f.upper_bounds());
    for (const auto& [labels, s] : f.series()) {
      if (f.type() == MetricType::kHistogram) {
        mine.set_histogram(labels, s.cumulative, s.sum);
      } else {
        mine.set(labels, s.value);
      }
    }
  }
}

const Family* Exposition::find(std::string_view name) const {
  auto it = families_.find(name);
  return it == families_.end() ? nullptr : &it->second;
}

std::vector<std::string> Exposition::names() const {
  std::vector<std::string> out;
  out.reserve(families_.size());
  for (const auto& [name, f] : families_) out.push_back(name);
  return out;
}

std::string Exposition::render() const {
  std::string out;
  for (const auto& [name, f] : families_) f.render(out);
  return out;
}

// ---------------------------------------------------------------- write_file_atomic

void write_file_atomic(const std::filesystem::path& path, std::string_view content) {
  if (auto written = write_file(path, content, 0644); !written) {
    throw std::runtime_error(written.error().message);
  }
}

}  // namespace gpulab::prom
