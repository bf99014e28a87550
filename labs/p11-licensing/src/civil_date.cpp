#include "licensing/civil_date.hpp"

#include <fmt/format.h>

namespace licensing {

namespace {

// Howard Hinnant's days_from_civil / civil_from_days (proleptic Gregorian).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

struct Civil {
  std::int64_t y;
  unsigned m, d;
};

Civil civil_from_days(std::int64_t z) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2 ? 1 : 0), m, d};
}

}  // namespace

std::optional<Date> parse_date(std::string_view s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return std::nullopt;
  auto num = [&](std::size_t at, std::size_t len) -> int {
    int v = 0;
    for (std::size_t i = at; i < at + len; ++i) {
      if (s[i] < '0' || s[i] > '9') return -1;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  const int y = num(0, 4), m = num(5, 2), d = num(8, 2);
  if (y < 1970 || m < 1 || m > 12 || d < 1) return std::nullopt;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  const int max_d = kDays[m - 1] + (m == 2 && leap ? 1 : 0);
  if (d > max_d) return std::nullopt;
  return Date{days_from_civil(y, static_cast<unsigned>(m), static_cast<unsigned>(d))};
}

std::string format_date(Date d) {
  const Civil c = civil_from_days(d.day);
  return fmt::format("{:04}-{:02}-{:02}", c.y, c.m, c.d);
}

Date date_of(std::int64_t unix_seconds) {
  // Floor division, so instants before 1970 land on the right day too.
  std::int64_t q = unix_seconds / kSecondsPerDay;
  if (unix_seconds % kSecondsPerDay < 0) --q;
  return Date{q};
}

std::int64_t start_of(Date d) { return d.day * kSecondsPerDay; }

}  // namespace licensing
