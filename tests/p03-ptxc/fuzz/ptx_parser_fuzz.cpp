// libFuzzer target: arbitrary bytes through the PTX parser, and every entry it
// accepts through one small launch of the interpreter. Rejection is a
// ParseError / ExecError / MemoryFault; nothing may crash or run unbounded.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ptxc/ptx_interpreter.hpp"
#include "ptxc/ptx_module.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  ptxc::ptx::Module m;
  try {
    m = ptxc::ptx::parse_ptx(text);
  } catch (const ptxc::ptx::ParseError&) {
    return 0;
  }
  for (const auto& e : m.entries) {
    ptxc::GlobalMemory mem;
    const float init[4] = {1.0F, 2.0F, 3.0F, 4.0F};
    const auto addr = mem.allocate("buf", init);
    std::vector<std::uint64_t> params(e.params.size(), addr);
    if (!params.empty()) params.back() = 4;  // the element count, by convention last
    try {
      ptxc::launch(e, params, {1, 2}, mem);
    } catch (const ptxc::ExecError&) {
    } catch (const ptxc::MemoryFault&) {
    }
  }
  return 0;
}
