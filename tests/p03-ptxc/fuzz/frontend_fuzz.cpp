// libFuzzer target: arbitrary bytes through the whole compiler. Any input may
// be rejected with a CompileError (or an invalid_argument for a bad target);
// nothing may crash, hang, or trip ASan/UBSan. Accepted programs must also
// produce PTX that ptxc's own PTX parser accepts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ptxc/c_emitter.hpp"
#include "ptxc/compiler.hpp"
#include "ptxc/ptx_module.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view src(reinterpret_cast<const char*>(data), size);
  for (int level : {0, 1}) {
    try {
      const auto c = ptxc::compile(src, "fuzz.k", ptxc::CompileOptions::at_level(level));
      (void)ptxc::emit_c(c.functions);
      (void)ptxc::ptx::parse_ptx(c.ptx);  // throws ParseError (not caught) if ptxc emitted bad PTX
    } catch (const ptxc::CompileError&) {
      return 0;
    }
  }
  return 0;
}
