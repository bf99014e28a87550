/* Layer 4: strings that would lead a reverse engineer to the licence check
 * ("licence key rejected", the key prefix) are not stored in the binary as
 * text. tools/obfgen.c encrypts them at build time into obf_strings.h; they
 * are decrypted onto the stack only when used, then wiped. */
#ifndef ANTITAMPER_OBFUSCATION_H
#define ANTITAMPER_OBFUSCATION_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The keystream both sides use: xorshift32 seeded per string. */
uint8_t at_keystream_next(uint32_t* state);

/* Decrypts n bytes into out (n + 1 bytes, NUL-terminated). */
void at_deobfuscate(const uint8_t* in, size_t n, uint32_t seed, char* out);

/* Wipes a buffer in a way the optimiser cannot remove. */
void at_wipe(void* p, size_t n);

#ifdef __cplusplus
}
#endif
#endif
