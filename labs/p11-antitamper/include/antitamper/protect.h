/* Functions placed in PROTECTED_SECTION are covered by the self-integrity
 * hash: the build seals SHA-256 of that section into the binary, and
 * at_verify_code_integrity() recomputes it from memory at run time. */
#ifndef ANTITAMPER_PROTECT_H
#define ANTITAMPER_PROTECT_H

/* A section name that is a C identifier, so GNU ld defines
 * __start_tamper_text / __stop_tamper_text around it. */
#define AT_PROTECTED __attribute__((section("tamper_text"), noinline))

#endif
