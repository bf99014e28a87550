/* Layer 3: LD_PRELOAD and hooked-symbol detection. */
#ifndef ANTITAMPER_HOOKS_H
#define ANTITAMPER_HOOKS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct at_hook_report {
  int ld_preload_set;        /* LD_PRELOAD in the environment the kernel gave us */
  int ld_so_preload;         /* /etc/ld.so.preload lists libraries */
  int symbols_checked;
  int symbols_hooked;
  char first_hook[160];      /* "strcmp from /path/libhook.so" */
};

/* Checks the environment, /etc/ld.so.preload (under `root`, normally "/")
 * and whether sensitive symbols resolve into the library that should own them. */
struct at_hook_report at_check_hooks(const char* root);

#ifdef __cplusplus
}
#endif
#endif
