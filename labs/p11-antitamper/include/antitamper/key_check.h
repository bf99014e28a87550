/* The toy licence-key check the layers protect, written twice: plainly, and
 * control-flow flattened (layer 5). Keys look like GPULAB-1234-ABCD-XXXX,
 * where XXXX is a checksum of the two groups before it. */
#ifndef ANTITAMPER_KEY_CHECK_H
#define ANTITAMPER_KEY_CHECK_H

#ifdef __cplusplus
extern "C" {
#endif

/* Readable reference: what the flattened version must compute. */
int at_key_check_plain(const char* key, const char* prefix);

/* The same decision as one dispatcher loop over scrambled state numbers:
 * no if/else structure for a decompiler to recover, and no strcmp to hook. */
int at_key_check_flat(const char* key, const char* prefix);

/* The issuer's side: writes PREFIX G1-G2-CCCC into out (G1, G2: 4 uppercase
 * hex digits each). Returns 0, or -1 on bad groups or a short buffer. */
int at_make_key(const char* prefix, const char* g1, const char* g2, char* out, unsigned long out_size);

/* The product's check: decrypts the prefix, runs the flattened check, wipes. */
int at_license_key_ok(const char* key);

#ifdef __cplusplus
}
#endif
#endif
