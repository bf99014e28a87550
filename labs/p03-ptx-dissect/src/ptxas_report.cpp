#include "ptx_dissect/ptxas_report.hpp"

#include <cstdio>
#include <regex>
#include <stdexcept>
#include <string>

namespace ptx_dissect {

PtxasReport parse_ptxas_report(std::string_view text) {
  // The lines, as ptxas 12/13 print them:
  //   ptxas info    : Compiling entry function 'spiller' for 'sm_80'
  //       560 bytes stack frame, 984 bytes spill stores, 988 bytes spill loads
  //   ptxas info    : Used 24 registers, used 0 barriers, ...
  //   ptxas warning : For profile sm_80 adjusting per thread register count of 16 to lower bound of
  //   24
  static const std::regex kCompiling(R"(Compiling entry function '([^']+)')");
  static const std::regex kFrame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex kUsed(R"(Used (\d+) registers)");
  static const std::regex kClamp(
      R"(For profile (\w+) adjusting per thread register count of (\d+) to lower bound of (\d+))");
  PtxasReport report;
  FunctionResources* current = nullptr;
  std::size_t start = 0;
  const std::string all(text);
  while (start < all.size()) {
    auto end = all.find('\n', start);
    if (end == std::string::npos) end = all.size();
    const std::string line = all.substr(start, end - start);
    start = end + 1;
    std::smatch m;
    if (std::regex_search(line, m, kCompiling)) {
      current = &report.functions[m[1].str()];
    } else if (std::regex_search(line, m, kClamp)) {
      report.clamp = RegisterClamp{m[1].str(), std::stoi(m[2].str()), std::stoi(m[3].str())};
    } else if (current != nullptr && std::regex_search(line, m, kFrame)) {
      current->stack_frame_bytes = std::stoi(m[1].str());
      current->spill_store_bytes = std::stoi(m[2].str());
      current->spill_load_bytes = std::stoi(m[3].str());
    } else if (current != nullptr && std::regex_search(line, m, kUsed)) {
      current->registers = std::stoi(m[1].str());
    }
  }
  if (report.functions.empty())
    throw std::runtime_error("no 'Compiling entry function' line: not ptxas -v output");
  return report;
}

}  // namespace ptx_dissect
