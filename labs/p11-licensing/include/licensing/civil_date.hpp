// Licence dates are whole UTC days ("2026-12-31"): what contracts say, and no
// time-zone ambiguity. A Date is a day number since 1970-01-01.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace licensing {

struct Date {
  std::int64_t day = 0;  // days since 1970-01-01 (UTC)
  auto operator<=>(const Date&) const = default;
};

inline constexpr std::int64_t kSecondsPerDay = 86400;

// Strict YYYY-MM-DD between 1970-01-01 and 9999-12-31; nullopt otherwise.
std::optional<Date> parse_date(std::string_view s);
std::string format_date(Date d);
Date date_of(std::int64_t unix_seconds);  // the UTC day containing that instant
std::int64_t start_of(Date d);            // 00:00:00 UTC of that day, in Unix seconds

}  // namespace licensing
