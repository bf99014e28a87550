/* tamperlab: a toy licence-key check behind five anti-tamper layers, each
 * reported with its verdict. Real products stay silent on detection; this
 * lab prints everything, because its purpose is to be studied and attacked. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "antitamper/debugger.h"
#include "antitamper/hooks.h"
#include "antitamper/integrity.h"
#include "antitamper/key_check.h"
#include "antitamper/obfuscation.h"
#include "gpulab/version.h" /* generated from project(VERSION) */
#include "obf_strings.h"

enum { kExitOk = 0, kExitFailed = 1, kExitUsage = 2 };

struct row {
  const char* layer;
  const char* verdict; /* PASS, FAIL, SKIP */
  char detail[200];
};

static void usage(FILE* to) {
  fprintf(to,
          "tamperlab: a toy licence-key check protected by layered, explained anti-tamper techniques.\n"
          "Each layer reports PASS or FAIL; every one of them can be defeated (see the lab README).\n\n"
          "Usage: tamperlab --key KEY [--json]\n"
          "  --key KEY   licence key to check, e.g. GPULAB-1234-ABCD-XXXX (required)\n"
          "  --json      print the verdicts as one JSON document\n"
          "  -h, --help  this text\n"
          "  --version   print the program name and gpulab's version, then exit\n"
          "Exit: 0 every layer passed and the key is valid, 1 a layer failed or the key is invalid, 2 bad usage.\n");
}

static void json_string(const char* s) {
  putchar('"');
  for (; *s; ++s) {
    if (*s == '"' || *s == '\\') printf("\\%c", *s);
    else if ((unsigned char)*s < 0x20) printf("\\u%04x", (unsigned char)*s);
    else putchar(*s);
  }
  putchar('"');
}

int main(int argc, char** argv) {
  static const struct option kOptions[] = {
      {"key", required_argument, NULL, 'k'}, {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, 'V'}, {0, 0, 0, 0}};
  const char* key = NULL;
  int json = 0;
  opterr = 0;
  for (int c; (c = getopt_long(argc, argv, "h", kOptions, NULL)) != -1;) {
    switch (c) {
      case 'k': key = optarg; break;
      case 'j': json = 1; break;
      case 'h': usage(stdout); return kExitOk;
      case 'V': printf("tamperlab %s\n", GPULAB_VERSION_STRING); return kExitOk;
      default:
        fprintf(stderr, "tamperlab: error: unknown or incomplete option '%s' (see --help)\n", argv[optind - 1]);
        return kExitUsage;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "tamperlab: error: unexpected argument '%s' (see --help)\n", argv[optind]);
    return kExitUsage;
  }
  if (!key) {
    fprintf(stderr, "tamperlab: error: --key is required (see --help)\n");
    return kExitUsage;
  }
  if (strlen(key) > 128) {
    fprintf(stderr, "tamperlab: error: --key is longer than any licence key (128 bytes)\n");
    return kExitUsage;
  }

  struct row rows[5];
  int n = 0, failed = 0;

  /* 1. Integrity first: if the code was patched, nothing else it says can be trusted or even run safely. */
  const struct at_integrity_result ir = at_verify_code_integrity();
  struct row* r = &rows[n++];
  r->layer = "code integrity";
  const int intact = ir.status == AT_INTEGRITY_OK;
  r->verdict = intact ? "PASS" : "FAIL";
  switch (ir.status) {
    case AT_INTEGRITY_OK:
      snprintf(r->detail, sizeof r->detail, "SHA-256 of tamper_text (%zu bytes) matches the build-time seal", ir.size);
      break;
    case AT_INTEGRITY_MISMATCH:
      snprintf(r->detail, sizeof r->detail, "SHA-256 of tamper_text (%zu bytes) differs from the seal: patched or breakpointed", ir.size);
      break;
    case AT_INTEGRITY_UNSEALED: snprintf(r->detail, sizeof r->detail, "binary was never sealed by tamperseal"); break;
    default: snprintf(r->detail, sizeof r->detail, "could not hash the code section (is libcrypto hooked?)"); break;
  }
  failed += !intact;
  /* Patched code must not run; a hash that merely could not be computed (a
   * hooked libc can break OpenSSL) is a FAIL, but the other layers still speak. */
  const int patched = ir.status == AT_INTEGRITY_MISMATCH;

  if (!patched) {
    const int tracer = at_tracer_pid("/proc/self/status");
    r = &rows[n++];
    r->layer = "debugger: TracerPid";
    r->verdict = tracer == 0 ? "PASS" : "FAIL";
    if (tracer < 0) snprintf(r->detail, sizeof r->detail, "/proc/self/status unreadable");
    else if (tracer == 0) snprintf(r->detail, sizeof r->detail, "TracerPid is 0 in /proc/self/status");
    else snprintf(r->detail, sizeof r->detail, "traced by process %d", tracer);
    failed += tracer != 0;

    const enum at_ptrace_verdict probe = at_ptrace_probe();
    r = &rows[n++];
    r->layer = "debugger: ptrace probe";
    r->verdict = probe == AT_PTRACE_NOT_TRACED ? "PASS" : probe == AT_PTRACE_RESTRICTED ? "SKIP" : "FAIL";
    snprintf(r->detail, sizeof r->detail, "%s",
             probe == AT_PTRACE_NOT_TRACED ? "a child could attach to us, so no other tracer holds us"
             : probe == AT_PTRACE_TRACED   ? "attach refused: another tracer holds this process"
             : probe == AT_PTRACE_RESTRICTED ? "Yama ptrace_scope >= 2 forbids the probe"
                                             : "probe could not run (fork/ptrace error)");
    failed += probe == AT_PTRACE_TRACED || probe == AT_PTRACE_ERROR;

    const struct at_hook_report h = at_check_hooks("/");
    r = &rows[n++];
    r->layer = "preload and hooks";
    const int hooked = h.ld_preload_set || h.ld_so_preload || h.symbols_hooked;
    r->verdict = hooked ? "FAIL" : "PASS";
    if (h.symbols_hooked) snprintf(r->detail, sizeof r->detail, "%d of %d symbols hooked, first: %s", h.symbols_hooked, h.symbols_checked, h.first_hook);
    else if (hooked) snprintf(r->detail, sizeof r->detail, "%s is set", h.ld_preload_set ? "LD_PRELOAD" : "/etc/ld.so.preload");
    else snprintf(r->detail, sizeof r->detail, "no LD_PRELOAD, no ld.so.preload, %d symbols resolve to their own libraries", h.symbols_checked);
    failed += hooked;

    const int ok = at_license_key_ok(key);
    r = &rows[n++];
    r->layer = "licence key";
    r->verdict = ok ? "PASS" : "FAIL";
    char msg[OBF_MSG_REJECTED_LEN > OBF_MSG_ACCEPTED_LEN ? OBF_MSG_REJECTED_LEN + 1 : OBF_MSG_ACCEPTED_LEN + 1];
    if (ok) at_deobfuscate(OBF_MSG_ACCEPTED, OBF_MSG_ACCEPTED_LEN, OBF_MSG_ACCEPTED_SEED, msg);
    else at_deobfuscate(OBF_MSG_REJECTED, OBF_MSG_REJECTED_LEN, OBF_MSG_REJECTED_SEED, msg);
    snprintf(r->detail, sizeof r->detail, "%s (flattened check; messages decrypted at use)", msg);
    at_wipe(msg, sizeof msg);
    failed += !ok;
  }

  if (json) {
    printf("{\"layers\": [");
    for (int i = 0; i < n; ++i) {
      printf("%s{\"layer\": ", i ? ", " : "");
      json_string(rows[i].layer);
      printf(", \"verdict\": \"%s\", \"detail\": ", rows[i].verdict);
      json_string(rows[i].detail);
      printf("}");
    }
    printf("], \"protected_bytes\": %zu, \"failed\": %d}\n", ir.size, failed);
  } else {
    printf("tamperlab: a toy licence-key check behind layered anti-tamper checks (each defeatable: see README)\n\n");
    printf("%-24s  %-7s  %s\n", "layer", "verdict", "detail");
    for (int i = 0; i < n; ++i) printf("%-24s  %-7s  %s\n", rows[i].layer, rows[i].verdict, rows[i].detail);
    if (patched) printf("%-24s  %-7s  %s\n", "(remaining layers)", "SKIP", "not run: the code is not the code that was built");
    printf("\n%d layer%s failed\n", failed, failed == 1 ? "" : "s");
  }
  return failed ? kExitFailed : kExitOk;
}
