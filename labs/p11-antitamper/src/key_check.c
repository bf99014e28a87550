#include "antitamper/key_check.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "antitamper/obfuscation.h"
#include "antitamper/protect.h"
#include "obf_strings.h"

enum { kChecksumSeed = 0x1D0F, kChecksumModulus = 65521 };

static int upper_hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

int at_key_check_plain(const char* key, const char* prefix) {
  const size_t plen = strlen(prefix);
  if (strncmp(key, prefix, plen) != 0) return 0;
  const char* p = key + plen;
  uint32_t sum = kChecksumSeed, last = 0;
  for (int group = 0; group < 3; ++group) {
    for (int i = 0; i < 4; ++i, ++p) {
      const int v = upper_hex(*p);
      if (v < 0) return 0;
      if (group < 2) sum = (sum * 31u + (unsigned char)*p) % kChecksumModulus;
      else last = last * 16u + (uint32_t)v;
    }
    if (group < 2 && *p++ != '-') return 0;
  }
  return *p == '\0' && last == sum;
}

int at_make_key(const char* prefix, const char* g1, const char* g2, char* out, unsigned long out_size) {
  if (strlen(g1) != 4 || strlen(g2) != 4) return -1;
  uint32_t sum = kChecksumSeed;
  const char* groups[2] = {g1, g2};
  for (int k = 0; k < 2; ++k) {
    for (int i = 0; i < 4; ++i) {
      if (upper_hex(groups[k][i]) < 0) return -1;
      sum = (sum * 31u + (unsigned char)groups[k][i]) % kChecksumModulus;
    }
  }
  const int n = snprintf(out, out_size, "%s%s-%s-%04X", prefix, g1, g2, (unsigned)sum);
  return n > 0 && (unsigned long)n < out_size ? 0 : -1;
}

/* Read at run time, so the compiler cannot resolve the dispatch statically. */
static volatile unsigned at_state_mask = 0x3c5au;

AT_PROTECTED int at_key_check_flat(const char* key, const char* prefix) {
  /* Arbitrary state numbers: their order says nothing about the program's. */
  enum { kPrefix = 0x5a17, kHex = 0x0c3e, kDash = 0x71d2, kEnd = 0x2b90, kCompare = 0x4e05, kAccept = 0x6f1a,
         kReject = 0x13c7 };
  const unsigned mask = at_state_mask;
  unsigned state = kPrefix ^ mask;
  size_t i = 0, j = 0;
  int group = 0, digits = 0;
  uint32_t sum = kChecksumSeed, last = 0;
  for (;;) {
    unsigned next = kReject;
    switch (state ^ mask) {
      case kPrefix:
        if (prefix[j] == '\0') next = kHex;
        else if (key[i] == prefix[j]) {
          ++i;
          ++j;
          next = kPrefix;
        }
        break;
      case kHex: {
        const char c = key[i];
        const int v = (c >= '0' && c <= '9') ? c - '0' : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
        if (v < 0) break;
        if (group < 2) sum = (sum * 31u + (unsigned char)c) % kChecksumModulus;
        else last = last * 16u + (uint32_t)v;
        ++i;
        next = ++digits < 4 ? kHex : group == 2 ? kEnd : kDash;
        break;
      }
      case kDash:
        if (key[i] == '-') {
          ++i;
          ++group;
          digits = 0;
          next = kHex;
        }
        break;
      case kEnd: next = key[i] == '\0' ? kCompare : kReject; break;
      case kCompare: next = last == sum ? kAccept : kReject; break;
      case kAccept: return 1;
      default: return 0;
    }
    state = next ^ mask;
  }
}

AT_PROTECTED int at_license_key_ok(const char* key) {
  char prefix[OBF_KEY_PREFIX_LEN + 1];
  at_deobfuscate(OBF_KEY_PREFIX, OBF_KEY_PREFIX_LEN, OBF_KEY_PREFIX_SEED, prefix);
  const int ok = at_key_check_flat(key, prefix);
  at_wipe(prefix, sizeof prefix);
  return ok;
}
