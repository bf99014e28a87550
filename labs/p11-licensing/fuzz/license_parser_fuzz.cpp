// libFuzzer target: the licence, fingerprint and activation-request parsers.
// Built with clang -fsanitize=fuzzer,address,undefined when clang is available
// (CMakeLists.txt), run briefly by ctest; the property lives in fuzz_entry.cpp.
#include <cstdlib>

#include "licensing/fuzz_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (!licensing::fuzz_one_input(data, size)) std::abort();  // accepted text that does not round-trip
  return 0;
}
