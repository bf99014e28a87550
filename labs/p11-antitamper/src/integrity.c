#include "antitamper/integrity.h"

#include <openssl/evp.h>
#include <string.h>

#include "antitamper/protect.h"

/* Provided by GNU ld for the section the protected functions live in. */
extern const unsigned char __start_tamper_text[];
extern const unsigned char __stop_tamper_text[];

/* Written by tamperseal after linking. Initialised (so the section is
 * PROGBITS, present in the file) and read through a volatile pointer (so the
 * compiler cannot fold in the pre-seal zeros). */
__attribute__((section("tamper_seal"), used)) struct at_seal at_build_seal = {AT_SEAL_MAGIC, 0, {0}};

AT_PROTECTED struct at_integrity_result at_verify_code_integrity(void) {
  struct at_integrity_result r;
  memset(&r, 0, sizeof r);
  struct at_seal seal;
  const volatile unsigned char* src = (const volatile unsigned char*)&at_build_seal;
  for (size_t i = 0; i < sizeof seal; ++i) ((unsigned char*)&seal)[i] = src[i];

  r.size = (size_t)(__stop_tamper_text - __start_tamper_text);
  unsigned int len = 0;
  if (EVP_Digest(__start_tamper_text, r.size, r.actual, &len, EVP_sha256(), NULL) != 1 || len != 32) {
    r.status = AT_INTEGRITY_ERROR;
    return r;
  }
  if (seal.size == 0) {
    r.status = AT_INTEGRITY_UNSEALED;
    return r;
  }
  /* Not a secret comparison: the expected hash sits in the same binary. */
  r.status = (seal.size == r.size && memcmp(seal.sha256, r.actual, 32) == 0) ? AT_INTEGRITY_OK
                                                                           : AT_INTEGRITY_MISMATCH;
  return r;
}
