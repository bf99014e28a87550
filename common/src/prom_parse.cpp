// The Prometheus text format's parser: text -> Exposition, with the checks
// promtool's `check metrics` makes (names, TYPE before samples, counters not
// negative, histogram buckets cumulative and ending in +Inf). The model and
// renderer are in prom_text.cpp.
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

#include "gpulab/prom_text.hpp"

namespace gpulab::prom {

namespace {

struct ParseFail {
  std::string message;
};

std::optional<double> parse_value(std::string_view s) {
  if (s == "+Inf" || s == "Inf") return std::numeric_limits<double>::infinity();
  if (s == "-Inf") return -std::numeric_limits<double>::infinity();
  if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (s.empty()) return std::nullopt;
  std::string_view body = s;
  if (body.front() == '+') body.remove_prefix(1);
  double v = 0;
  const auto [p, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
  if (ec != std::errc() || p != body.data() + body.size()) return std::nullopt;
  return v;
}

struct Sample {
  std::string name;
  Labels labels;
  double value = 0;
};

// name{a="b",...} value
Sample parse_sample(std::string_view line) {
  Sample s;
  std::size_t i = 0;
  while (i < line.size() && line[i] != '{' && line[i] != ' ' && line[i] != '\t') ++i;
  s.name = std::string(line.substr(0, i));
  if (!valid_metric_name(s.name)) throw ParseFail{fmt::format("invalid metric name '{}'", s.name)};
  if (i < line.size() && line[i] == '{') {
    ++i;
    for (;;) {
      while (i < line.size() && line[i] == ' ') ++i;
      if (i < line.size() && line[i] == '}') {
        ++i;
        break;
      }
      std::size_t k = i;
      while (k < line.size() && line[k] != '=' && line[k] != ' ') ++k;
      std::string key(line.substr(i, k - i));
      if (!valid_label_name(key)) throw ParseFail{fmt::format("invalid label name '{}'", key)};
      while (k < line.size() && line[k] == ' ') ++k;
      if (k + 1 >= line.size() || line[k] != '=' || line[k + 1] != '"') {
        throw ParseFail{fmt::format("label '{}' needs =\"value\"", key)};
      }
      i = k + 2;
      std::string value;
      bool closed = false;
      while (i < line.size()) {
        const char c = line[i++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c == '\\') {
          if (i >= line.size()) break;
          const char e = line[i++];
          if (e == 'n') {
            value += '\n';
          } else if (e == '\\' || e == '"') {
            value += e;
          } else {
            throw ParseFail{fmt::format("label '{}': unknown escape \\{}", key, e)};
          }
        } else {
          value += c;
        }
      }
      if (!closed) throw ParseFail{fmt::format("label '{}': unterminated value", key)};
      for (const auto& [k2, v2] : s.labels) {
        if (k2 == key) throw ParseFail{fmt::format("label '{}' given twice", key)};
      }
      s.labels.emplace_back(std::move(key), std::move(value));
      while (i < line.size() && line[i] == ' ') ++i;
      if (i < line.size() && line[i] == ',') {
        ++i;
      } else if (i < line.size() && line[i] == '}') {
        ++i;
        break;
      } else {
        throw ParseFail{"expected ',' or '}' after a label"};
      }
    }
  }
  const std::size_t before = i;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  if (i == before) throw ParseFail{"expected a space before the value"};
  std::size_t end = i;
  while (end < line.size() && line[end] != ' ' && line[end] != '\t') ++end;
  const auto v = parse_value(line.substr(i, end - i));
  if (!v) throw ParseFail{fmt::format("invalid value '{}'", line.substr(i, end - i))};
  s.value = *v;
  while (end < line.size() && (line[end] == ' ' || line[end] == '\t')) ++end;
  if (end != line.size()) throw ParseFail{"timestamps are not supported in a textfile"};
  return s;
}

struct PendingFamily {
  std::string name;
  std::string help;
  std::optional<MetricType> type;
  bool has_samples = false;
  std::vector<Sample> samples;
};

std::string unescape_help(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == '\\' || s[i + 1] == 'n')) {
      out += s[i + 1] == 'n' ? '\n' : '\\';
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

Labels without_le(const Labels& labels, std::optional<double>* le) {
  Labels out;
  for (const auto& [k, v] : labels) {
    if (k == "le") {
      const auto x = parse_value(v);
      if (!x || std::isnan(*x)) throw ParseFail{fmt::format("invalid le=\"{}\"", v)};
      *le = *x;
    } else {
      out.emplace_back(k, v);
    }
  }
  return out;
}

void build_family(const PendingFamily& p, Exposition& out) {
  const MetricType type = p.type.value_or(MetricType::kUntyped);
  if (type != MetricType::kHistogram) {
    Family& f = out.family(p.name, p.help, type);
    for (const auto& s : p.samples) {
      if (f.find(s.labels) != nullptr) {
        throw ParseFail{fmt::format("{}: duplicate series", p.name)};
      }
      if (type == MetricType::kCounter && !(s.value >= 0)) {
        throw ParseFail{fmt::format("{}: a counter cannot be {}", p.name, format_value(s.value))};
      }
      f.set(s.labels, s.value);
    }
    return;
  }
  struct H {
    std::vector<std::pair<double, double>> buckets;  // le, cumulative count
    std::optional<double> sum;
    std::optional<double> count;
  };
  std::map<Labels, H, decltype(&labels_less)> series(&labels_less);
  for (const auto& s : p.samples) {
    const std::string_view suffix = std::string_view(s.name).substr(p.name.size());
    std::optional<double> le;
    Labels key = without_le(s.labels, &le);
    H& h = series[key];
    if (suffix == "_bucket") {
      if (!le) throw ParseFail{fmt::format("{}: a bucket without le", s.name)};
      h.buckets.emplace_back(*le, s.value);
    } else if (le) {
      throw ParseFail{fmt::format("{}: le on a non-bucket sample", s.name)};
    } else if (suffix == "_sum") {
      if (h.sum) throw ParseFail{fmt::format("{}: duplicate series", s.name)};
      h.sum = s.value;
    } else {
      if (h.count) throw ParseFail{fmt::format("{}: duplicate series", s.name)};
      h.count = s.value;
    }
  }
  std::optional<std::vector<double>> bounds;
  for (const auto& [labels, h] : series) {
    if (h.buckets.empty() || !std::isinf(h.buckets.back().first)) {
      throw ParseFail{fmt::format("{}: histogram series without an le=\"+Inf\" bucket", p.name)};
    }
    if (!h.sum || !h.count) {
      throw ParseFail{fmt::format("{}: histogram series without _sum or _count", p.name)};
    }
    std::vector<double> b;
    std::vector<double> cumulative;
    for (std::size_t i = 0; i < h.buckets.size(); ++i) {
      if (i > 0 && !(h.buckets[i].first > h.buckets[i - 1].first)) {
        throw ParseFail{fmt::format("{}: le bounds must increase", p.name)};
      }
      if (i > 0 && h.buckets[i].second < h.buckets[i - 1].second) {
        throw ParseFail{fmt::format("{}: cumulative bucket counts decrease", p.name)};
      }
      if (!(h.buckets[i].second >= 0)) {
        throw ParseFail{fmt::format("{}: negative bucket count", p.name)};
      }
      if (i + 1 < h.buckets.size()) b.push_back(h.buckets[i].first);
      cumulative.push_back(h.buckets[i].second);
    }
    if (cumulative.back() != *h.count) {
      throw ParseFail{fmt::format("{}: le=\"+Inf\" bucket {} differs from _count {}", p.name,
                                  format_value(cumulative.back()), format_value(*h.count))};
    }
    if (bounds && *bounds != b) {
      throw ParseFail{fmt::format("{}: series with different bucket bounds", p.name)};
    }
    bounds = b;
    out.family(p.name, p.help, MetricType::kHistogram, b).set_histogram(labels, cumulative, *h.sum);
  }
  if (series.empty()) out.family(p.name, p.help, MetricType::kHistogram, {});
}

// The family a sample belongs to: its own name, or a histogram's name for
// name_bucket / name_sum / name_count.
bool belongs(const PendingFamily& p, std::string_view sample) {
  if (sample == p.name) return p.type != MetricType::kHistogram;
  if (p.type != MetricType::kHistogram || !sample.starts_with(p.name)) return false;
  const auto suffix = sample.substr(p.name.size());
  return suffix == "_bucket" || suffix == "_sum" || suffix == "_count";
}

}  // namespace

Expected<Exposition> parse(std::string_view text) {
  Exposition out;
  std::optional<PendingFamily> cur;
  std::set<std::string, std::less<>> done;
  std::size_t line_no = 0;
  const auto finish = [&] {
    if (cur) {
      build_family(*cur, out);
      done.insert(cur->name);
      cur.reset();
    }
  };
  const auto start = [&](const std::string& name) {
    if (cur && cur->name == name) return;
    finish();
    if (done.contains(name)) throw ParseFail{fmt::format("{}: family appears twice", name)};
    cur = PendingFamily{};
    cur->name = name;
  };
  try {
    std::size_t pos = 0;
    while (pos < text.size()) {
      std::size_t nl = text.find('\n', pos);
      if (nl == std::string_view::npos) nl = text.size();
      std::string_view line = text.substr(pos, nl - pos);
      pos = nl + 1;
      ++line_no;
      if (line.find('\0') != std::string_view::npos) throw ParseFail{"NUL byte"};
      while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
        line.remove_suffix(1);
      }
      while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
      if (line.empty()) continue;
      if (line.front() == '#') {
        std::string_view rest = line.substr(1);
        while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
        const bool is_help = rest.starts_with("HELP ");
        const bool is_type = rest.starts_with("TYPE ");
        if (!is_help && !is_type) continue;  // a plain comment
        rest.remove_prefix(5);
        while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
        const std::size_t sp = std::min(rest.find(' '), rest.size());
        const std::string name(rest.substr(0, sp));
        std::string_view arg = sp < rest.size() ? rest.substr(sp + 1) : std::string_view{};
        if (!valid_metric_name(name)) {
          throw ParseFail{fmt::format("invalid metric name '{}'", name)};
        }
        start(name);
        if (is_help) {
          if (!cur->help.empty()) throw ParseFail{fmt::format("{}: HELP given twice", name)};
          cur->help = unescape_help(arg);
        } else {
          if (cur->type) throw ParseFail{fmt::format("{}: TYPE given twice", name)};
          if (cur->has_samples) throw ParseFail{fmt::format("{}: TYPE after its samples", name)};
          if (arg == "gauge") {
            cur->type = MetricType::kGauge;
          } else if (arg == "counter") {
            cur->type = MetricType::kCounter;
          } else if (arg == "histogram") {
            cur->type = MetricType::kHistogram;
          } else if (arg == "untyped") {
            cur->type = MetricType::kUntyped;
          } else if (arg == "summary") {
            throw ParseFail{fmt::format("{}: summaries are not supported", name)};
          } else {
            throw ParseFail{fmt::format("{}: unknown type '{}'", name, arg)};
          }
        }
        continue;
      }
      Sample s = parse_sample(line);
      if (!cur || !belongs(*cur, s.name)) start(s.name);
      if (cur->type == MetricType::kHistogram && !belongs(*cur, s.name)) {
        throw ParseFail{fmt::format("{}: not a sample of histogram {}", s.name, cur->name)};
      }
      cur->has_samples = true;
      cur->samples.push_back(std::move(s));
    }
    line_no = 0;
    finish();
  } catch (const ParseFail& e) {
    if (line_no == 0) return Error{e.message};
    return Error{fmt::format("line {}: {}", line_no, e.message)};
  }
  return out;
}

}  // namespace gpulab::prom
