/* Layer 1: self-integrity of the code that makes the licence decision. */
#ifndef ANTITAMPER_INTEGRITY_H
#define ANTITAMPER_INTEGRITY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The seal the build writes into the binary (tools/tamperseal.c). */
#define AT_SEAL_MAGIC "GPULAB-SEAL-V1"
struct at_seal {
  char magic[16];
  uint64_t size;          /* bytes of tamper_text that were hashed */
  uint8_t sha256[32];
};

enum at_integrity_status {
  AT_INTEGRITY_OK,
  AT_INTEGRITY_MISMATCH,   /* code differs from the build: patched or breakpointed */
  AT_INTEGRITY_UNSEALED,   /* this binary was never sealed (e.g. a test executable) */
  AT_INTEGRITY_ERROR
};

struct at_integrity_result {
  enum at_integrity_status status;
  size_t size;             /* bytes hashed at run time */
  uint8_t actual[32];
};

struct at_integrity_result at_verify_code_integrity(void);

#ifdef __cplusplus
}
#endif
#endif
