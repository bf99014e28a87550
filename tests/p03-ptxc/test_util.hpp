// Small helpers shared by the ptxc tests.
#pragma once

#include <string>
#include <string_view>

#include "ptxc/compiler.hpp"
#include "ptxc/ptx_module.hpp"

namespace ptxc_test {

inline ptxc::Compilation compile_at(std::string_view src, int level) {
  return ptxc::compile(src, "test.k", ptxc::CompileOptions::at_level(level));
}

// The number of instructions in the PTX of the (first) kernel of `src`.
inline std::size_t ptx_instructions(std::string_view src, int level) {
  const auto c = compile_at(src, level);
  return ptxc::ptx::instruction_count(ptxc::ptx::parse_ptx(c.ptx).entries.at(0));
}

inline std::size_t count_of(std::string_view text, std::string_view needle) {
  std::size_t n = 0;
  for (auto pos = text.find(needle); pos != std::string_view::npos;
       pos = text.find(needle, pos + 1))
    ++n;
  return n;
}

}  // namespace ptxc_test
