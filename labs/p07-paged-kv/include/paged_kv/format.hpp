// Small number formatting the reports share.
#pragma once

#include <cstdint>
#include <string>

namespace paged_kv {

// Bytes in the largest binary unit that keeps the value >= 1: "128.0 KiB", "1.00 GiB".
std::string binary_bytes(std::uint64_t bytes);

}  // namespace paged_kv
