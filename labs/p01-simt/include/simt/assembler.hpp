// Text → Program. One instruction per line, optional `LABEL:` prefix, operands
// separated by commas, registers r0–r15, decimal immediates, `;` comments.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

#include "simt/isa.hpp"

namespace simt {

// A diagnostic at FILE:LINE; what() is "FILE:LINE: error: MESSAGE".
class AssemblyError : public std::runtime_error {
 public:
  AssemblyError(std::string file, int line, const std::string& message);
  [[nodiscard]] int line() const { return line_; }

 private:
  int line_;
};

// A kernel is a page of text; the cap turns /dev/zero or a mistyped 40 GB log
// into an error instead of an out-of-memory kill.
inline constexpr std::size_t kMaxSourceBytes = std::size_t{1} << 20;

Program assemble(std::string_view source, std::string file_name);
// Throws gpulab::UsageError if the file is missing, a directory or a device, or
// larger than kMaxSourceBytes.
Program assemble_file(const std::string& path);

}  // namespace simt
