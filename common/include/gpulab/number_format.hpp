// Numbers as the labs' tables print them.
#pragma once

#include <cstdint>
#include <string>

namespace gpulab {

// 1234567 -> "1,234,567". fmt's {:L} follows the process locale; tables that
// README blocks check must not, so this always groups by three with commas.
std::string with_commas(std::uint64_t n);

}  // namespace gpulab
