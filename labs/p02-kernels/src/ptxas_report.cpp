#include "kernels/ptxas_report.hpp"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <regex>
#include <sstream>

namespace kernels {

std::string short_kernel_name(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> demangled(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || !demangled) return mangled;
  std::string name = demangled.get();
  // Drop the parameter list: the last '(' at template depth 0.
  int depth = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    if (name[i] == '>') --depth;
    if (name[i] == '(' && depth == 0 && name.compare(i, 21, "(anonymous namespace)") != 0) {
      name.resize(i);
      break;
    }
  }
  // Drop the qualifiers: everything up to the last "::" outside template arguments.
  depth = 0;
  std::size_t cut = 0;
  for (std::size_t i = 0; i + 1 < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    if (name[i] == '>') --depth;
    if (depth == 0 && name[i] == ':' && name[i + 1] == ':') cut = i + 2;
  }
  return name.substr(cut);
}

std::vector<PtxasEntry> parse_ptxas_report(std::string_view text) {
  static const std::regex entry_re(R"(Compiling entry function '([^']+)' for '([^']+)')");
  static const std::regex frame_re(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used_re(R"(Used (\d+) registers)");
  static const std::regex smem_re(R"((\d+) bytes smem)");
  std::vector<PtxasEntry> entries;
  std::istringstream in{std::string(text)};
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, entry_re)) {
      PtxasEntry e;
      e.kernel = short_kernel_name(m[1].str());
      e.arch = m[2].str();
      entries.push_back(std::move(e));
      continue;
    }
    if (entries.empty()) continue;
    PtxasEntry& e = entries.back();
    if (std::regex_search(line, m, frame_re)) {
      e.stack_bytes = std::stoi(m[1].str());
      e.spill_store_bytes = std::stoi(m[2].str());
      e.spill_load_bytes = std::stoi(m[3].str());
    }
    if (std::regex_search(line, m, used_re)) {
      e.registers = std::stoi(m[1].str());
      if (std::regex_search(line, m, smem_re)) e.smem_bytes = std::stoi(m[1].str());
    }
  }
  return entries;
}

}  // namespace kernels
