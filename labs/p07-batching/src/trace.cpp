#include "batching/trace.hpp"

#include <fmt/core.h>

#include <charconv>
#include <cmath>
#include <sstream>
#include <string_view>

#include "gpulab/errors.hpp"
#include "gpulab/utf8_bom.hpp"
#include "gpulab/file.hpp"
#include "gpulab/text.hpp"

namespace batching {
namespace {

using gpulab::trim;

std::vector<std::string_view> split(std::string_view line) {
  return gpulab::split_fields(line);
}

bool parse_u32(std::string_view s, std::uint32_t& v) {
  return gpulab::parse_number(s, v);
}

bool parse_double(std::string_view s, double& v) {
  return gpulab::parse_number(s, v) && std::isfinite(v);
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
long long days_from_civil(long long y, unsigned m, unsigned d) {
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

// "YYYY-MM-DD HH:MM:SS[.fraction][Z|+HH:MM|-HH:MM]" → milliseconds since the epoch (UTC).
bool parse_timestamp(std::string_view s, double& ms) {
  auto num = [&](std::size_t pos, std::size_t len, unsigned& v) {
    if (pos + len > s.size()) return false;
    const auto r = std::from_chars(s.data() + pos, s.data() + pos + len, v);
    return r.ec == std::errc() && r.ptr == s.data() + pos + len;
  };
  unsigned y, mo, d, h, mi, sec;
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') ||
      s[13] != ':' || s[16] != ':')
    return false;
  if (!num(0, 4, y) || !num(5, 2, mo) || !num(8, 2, d) || !num(11, 2, h) || !num(14, 2, mi) ||
      !num(17, 2, sec))
    return false;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return false;
  std::size_t pos = 19;
  double frac = 0;
  if (pos < s.size() && s[pos] == '.') {
    double scale = 0.1;
    ++pos;
    const std::size_t digits = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      frac += (s[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == digits) return false;
  }
  double offset_min = 0;
  if (pos < s.size()) {
    if (s[pos] == 'Z' && pos + 1 == s.size()) {
      pos = s.size();
    } else if ((s[pos] == '+' || s[pos] == '-') && s.size() - pos == 6 && s[pos + 3] == ':') {
      unsigned oh, om;
      if (!num(pos + 1, 2, oh) || !num(pos + 4, 2, om)) return false;
      offset_min = (s[pos] == '-' ? -1.0 : 1.0) * (oh * 60.0 + om);
      pos = s.size();
    } else {
      return false;
    }
  }
  const double secs = static_cast<double>(days_from_civil(y, mo, d)) * 86400.0 + h * 3600.0 +
                      mi * 60.0 + sec + frac - offset_min * 60.0;
  ms = secs * 1000.0;
  return true;
}

}  // namespace

std::vector<Request> parse_trace(std::istream& in, const std::string& name) {
  enum class Layout { kUnknown, kAzure, kPlain } layout = Layout::kUnknown;
  std::vector<Request> out;
  std::string line;
  std::size_t lineno = 0;
  double first = 0, previous = 0;
  auto fail = [&](const std::string& what) {
    throw gpulab::UsageError(fmt::format("{}:{}: {}", name, lineno, what));
  };
  while (std::getline(in, line)) {
    ++lineno;
    const std::string_view text = trim(lineno == 1 ? gpulab::without_utf8_bom(line) : line);
    if (text.empty() || text.front() == '#') continue;
    const auto f = split(text);
    if (layout == Layout::kUnknown) {
      if (f.size() == 3 && f[0] == "TIMESTAMP" && f[1] == "ContextTokens" &&
          f[2] == "GeneratedTokens") {
        layout = Layout::kAzure;
        continue;
      }
      if (f.size() == 3 && f[0] == "arrival_ms" && f[1] == "prompt_tokens" &&
          f[2] == "output_tokens") {
        layout = Layout::kPlain;
        continue;
      }
      double probe;
      if (f.empty() || !parse_double(f[0], probe))
        fail(
            "unknown header: expected 'TIMESTAMP,ContextTokens,GeneratedTokens' (Azure) or "
            "'arrival_ms,prompt_tokens,output_tokens'");
      layout = Layout::kPlain;
    }
    if (f.size() != 3) fail(fmt::format("expected 3 comma-separated fields, got {}", f.size()));
    double at = 0;
    if (layout == Layout::kAzure) {
      if (!parse_timestamp(f[0], at))
        fail(fmt::format("bad timestamp '{}' (want YYYY-MM-DD HH:MM:SS.fff)", f[0]));
    } else if (!parse_double(f[0], at) || at < 0) {
      fail(fmt::format("bad arrival_ms '{}' (want a number >= 0)", f[0]));
    }
    Request r;
    if (!parse_u32(f[1], r.prompt_tokens) || r.prompt_tokens == 0 || r.prompt_tokens > 10'000'000)
      fail(fmt::format("bad prompt token count '{}' (want an integer in 1..10000000)", f[1]));
    if (!parse_u32(f[2], r.output_tokens) || r.output_tokens == 0 || r.output_tokens > 10'000'000)
      fail(fmt::format("bad output token count '{}' (want an integer in 1..10000000)", f[2]));
    if (out.empty())
      first = at;
    else if (at < previous)
      fail("arrival goes back in time (sort the trace by arrival)");
    previous = at;
    r.arrival_ms = at - first;
    out.push_back(r);
  }
  if (out.empty()) throw gpulab::UsageError(fmt::format("{}: the trace holds no requests", name));
  return out;
}

std::vector<Request> load_trace(const std::string& path) {
  auto text = gpulab::read_text_file(path, kMaxTraceBytes);
  if (!text) throw gpulab::UsageError(text.error().message);
  std::istringstream in(std::move(text).value());
  return parse_trace(in, path);
}

}  // namespace batching
