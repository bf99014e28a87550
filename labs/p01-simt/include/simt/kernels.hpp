// The shipped programs (kernels/*.simt, compiled into the binary so the
// built-in report needs no files) and the result each one must leave in memory.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "simt/isa.hpp"

namespace simt {

struct BuiltinKernel {
  std::string_view name;
  std::string_view file;                                 // under kernels/
  int checked_words;                                     // mem[0, checked_words) is checked
  std::function<std::int64_t(std::int64_t)> expected;    // expected mem[i]
};

const std::vector<BuiltinKernel>& builtin_kernels();
const BuiltinKernel& builtin_kernel(std::string_view name);  // throws std::out_of_range
std::string_view embedded_source(std::string_view file);     // throws std::out_of_range
Program load_builtin(std::string_view name);

// Which memory words disagree with a kernel's expected result.
struct LaneCheck {
  int checked = 0;
  std::vector<int> wrong;  // indices of wrong words
  std::vector<std::int64_t> got, want;  // parallel to `wrong`
  [[nodiscard]] bool ok() const { return wrong.empty(); }
};
LaneCheck check_memory(const BuiltinKernel& kernel, const std::vector<std::int64_t>& mem);

}  // namespace simt
