#include "antitamper/obfuscation.h"

#include <string.h>

uint8_t at_keystream_next(uint32_t* state) {
  uint32_t x = *state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  *state = x;
  return (uint8_t)(x >> 24);
}

void at_deobfuscate(const uint8_t* in, size_t n, uint32_t seed, char* out) {
  uint32_t s = seed;
  for (size_t i = 0; i < n; ++i) out[i] = (char)(in[i] ^ at_keystream_next(&s));
  out[n] = '\0';
}

void at_wipe(void* p, size_t n) {
  volatile unsigned char* v = (volatile unsigned char*)p;
  while (n--) *v++ = 0;
}
