// A libFuzzer target with undefined behaviour on purpose: any input of 4+ bytes whose first
// int is positive overflows. Built with GPULAB_FUZZ_FLAGS, the run must fail (UBSan aborts);
// without -fno-sanitize-recover=all UBSan printed the error and the run exited 0.
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  int x = 0;
  std::memcpy(&x, data, sizeof x);
  if (x <= 0) return 0;
  volatile int y = x;
  y = y + INT_MAX;  // signed overflow for every positive x
  return y == 0 ? 1 : 0;
}
