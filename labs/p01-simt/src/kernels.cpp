#include "simt/kernels.hpp"

#include <stdexcept>

#include "embedded_kernels.hpp"
#include "simt/assembler.hpp"

namespace simt {
namespace {

std::int64_t even_odd_value(std::int64_t t) { return t * t + 1 - t % 2; }

}  // namespace

const std::vector<BuiltinKernel>& builtin_kernels() {
  static const std::vector<BuiltinKernel> kernels{
      {"uniform", "uniform.simt", 32, even_odd_value},
      {"warp_uniform", "warp_uniform.simt", 32, [](std::int64_t t) { return t * t; }},
      {"even_odd", "even_odd.simt", 32, even_odd_value},
      {"max_divergent", "max_divergent.simt", 32, even_odd_value},
      {"nested", "nested.simt", 32,
       [](std::int64_t t) -> std::int64_t { return t % 2 == 0 ? 0 : (t % 4 == 1 ? 100 : 300); }},
      // mem[t] = full-warp vote (lane 0 votes yes) = 1; mem[32 + t] = vote inside the t%2 split.
      {"vote_any", "vote_any.simt", 64,
       [](std::int64_t i) -> std::int64_t { return i < 32 ? 1 : ((i - 32) % 2 == 0 ? 1 : 0); }},
      {"even_odd_selp", "even_odd_selp.simt", 32, even_odd_value},
  };
  return kernels;
}

const BuiltinKernel& builtin_kernel(std::string_view name) {
  for (const auto& k : builtin_kernels())
    if (k.name == name) return k;
  throw std::out_of_range("no built-in kernel named " + std::string(name));
}

std::string_view embedded_source(std::string_view file) {
  for (const auto& [name, text] : kEmbeddedKernels)
    if (name == file) return text;
  throw std::out_of_range("no embedded kernel file " + std::string(file));
}

Program load_builtin(std::string_view name) {
  // Diagnostics name the file as the learner sees it in the lab folder.
  const auto file = name.ends_with(".simt") ? name : builtin_kernel(name).file;
  return assemble(embedded_source(file), "kernels/" + std::string(file));
}

LaneCheck check_memory(const BuiltinKernel& kernel, const std::vector<std::int64_t>& mem) {
  LaneCheck c;
  c.checked = kernel.checked_words;
  for (int i = 0; i < kernel.checked_words; ++i) {
    const std::int64_t want = kernel.expected(i);
    const std::int64_t got = static_cast<std::size_t>(i) < mem.size() ? mem[static_cast<std::size_t>(i)] : 0;
    if (got != want) {
      c.wrong.push_back(i);
      c.got.push_back(got);
      c.want.push_back(want);
    }
  }
  return c;
}

}  // namespace simt
