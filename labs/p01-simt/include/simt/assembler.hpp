// Text → Program. One instruction per line, optional `LABEL:` prefix, operands
// separated by commas, registers r0–r15, decimal immediates, `;` comments.
#pragma once

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

Program assemble(std::string_view source, std::string file_name);
Program assemble_file(const std::string& path);  // throws gpulab::UsageError if unreadable

}  // namespace simt
