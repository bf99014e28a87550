#define _GNU_SOURCE
#include "antitamper/hooks.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "antitamper/protect.h"

/* Reads /proc/self/environ rather than trusting getenv(), which a preloaded
 * library could itself replace. */
static int environ_has_ld_preload(void) {
  const int fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return getenv("LD_PRELOAD") != NULL;
  char buf[4096];
  int found = 0;
  size_t at_entry_start = 1;
  for (ssize_t n; !found && (n = read(fd, buf, sizeof buf)) > 0;) {
    for (ssize_t i = 0; i < n; ++i) {
      if (at_entry_start && (size_t)(n - i) >= 11 && memcmp(buf + i, "LD_PRELOAD=", 11) == 0) found = 1;
      at_entry_start = buf[i] == '\0';
    }
  }
  close(fd);
  return found;
}

static int ld_so_preload_in_use(const char* root) {
  char path[512];
  snprintf(path, sizeof path, "%s/etc/ld.so.preload", root);
  FILE* f = fopen(path, "r");
  if (!f) return 0;
  int c, any = 0;
  while ((c = fgetc(f)) != EOF) {
    if (c != ' ' && c != '\n' && c != '\t') any = 1;
  }
  fclose(f);
  return any;
}

/* The object a resolved address belongs to may be a sanitizer runtime in
 * instrumented builds: it interposes libc on purpose. */
static int allowed_interposer(const char* object) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return object && (strstr(object, "libasan") || strstr(object, "libtsan") || strstr(object, "libubsan"));
#else
  (void)object;
  return 0;
#endif
}

AT_PROTECTED struct at_hook_report at_check_hooks(const char* root) {
  struct at_hook_report r;
  memset(&r, 0, sizeof r);
  r.ld_preload_set = environ_has_ld_preload();
  r.ld_so_preload = ld_so_preload_in_use(root);

  /* Symbols a cracker would hook to fake a licence check or hide a debugger. */
  static const struct {
    const char* lib;
    const char* symbol;
  } kWatched[] = {{"libc.so.6", "strcmp"}, {"libc.so.6", "strncmp"}, {"libc.so.6", "memcmp"},
                  {"libc.so.6", "ptrace"}, {"libc.so.6", "getenv"},  {"libc.so.6", "fopen"},
                  {"libc.so.6", "time"},   {"libcrypto.so.3", "EVP_Digest"}};
  for (size_t i = 0; i < sizeof kWatched / sizeof kWatched[0]; ++i) {
    void* lib = dlopen(kWatched[i].lib, RTLD_LAZY | RTLD_NOLOAD);
    if (!lib) continue;
    void* owner = dlsym(lib, kWatched[i].symbol);
    void* seen = dlsym(RTLD_DEFAULT, kWatched[i].symbol);
    dlclose(lib);
    if (!owner || !seen) continue;
    ++r.symbols_checked;
    if (owner == seen) continue;
    Dl_info info;
    const char* object = dladdr(seen, &info) && info.dli_fname ? info.dli_fname : "an unknown object";
    if (allowed_interposer(object)) continue;
    if (r.symbols_hooked++ == 0) snprintf(r.first_hook, sizeof r.first_hook, "%s from %s", kWatched[i].symbol, object);
  }
  return r;
}
