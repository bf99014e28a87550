// Small number formatting the reports share.
#pragma once

#include <cstdint>
#include <string>

namespace paged_kv {

// 1234567 → "1,234,567" (fmt's {:L} depends on the process locale; this does not).
std::string with_commas(std::uint64_t n);
// Bytes in the largest binary unit that keeps the value >= 1: "128.0 KiB", "1.00 GiB".
std::string binary_bytes(std::uint64_t bytes);

}  // namespace paged_kv
