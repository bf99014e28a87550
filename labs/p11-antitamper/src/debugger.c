#define _GNU_SOURCE
#include "antitamper/debugger.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "antitamper/protect.h"

AT_PROTECTED int at_tracer_pid(const char* status_path) {
  FILE* f = fopen(status_path, "r");
  if (!f) return -1;
  char line[256];
  int pid = -1;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "TracerPid:", 10) == 0) {
      char* end = NULL;
      const long v = strtol(line + 10, &end, 10);
      pid = (end != line + 10 && v >= 0 && v < (1L << 22)) ? (int)v : -1;
      break;
    }
  }
  fclose(f);
  return pid;
}

static int yama_scope(void) {
  FILE* f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
  if (!f) return 0; /* no Yama: classic ptrace rules */
  int v = 0;
  if (fscanf(f, "%d", &v) != 1) v = 0;
  fclose(f);
  return v;
}

AT_PROTECTED enum at_ptrace_verdict at_ptrace_probe(void) {
  if (yama_scope() >= 2) return AT_PTRACE_RESTRICTED;
  const pid_t parent = getpid();
  int go[2];
  if (pipe(go) != 0) return AT_PTRACE_ERROR;
  const pid_t child = fork();
  if (child < 0) {
    close(go[0]);
    close(go[1]);
    return AT_PTRACE_ERROR;
  }
  if (child == 0) {
    /* Wait until the parent has named us as an allowed tracer (Yama scope 1). */
    char c;
    close(go[1]);
    if (read(go[0], &c, 1) != 1) _exit(2);
    /* Only one tracer per process: if ours is taken, attach fails with EPERM. */
    if (ptrace(PTRACE_ATTACH, parent, NULL, NULL) != 0) _exit(errno == EPERM ? 1 : 2);
    int st = 0;
    waitpid(parent, &st, 0);
    ptrace(PTRACE_DETACH, parent, NULL, NULL);
    _exit(0);
  }
  /* Yama scope 1 lets only ancestors trace; name the child as allowed. */
  prctl(PR_SET_PTRACER, (unsigned long)child, 0, 0, 0);
  close(go[0]);
  const ssize_t sent = write(go[1], "g", 1);
  close(go[1]);
  if (sent != 1) {
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    return AT_PTRACE_ERROR;
  }
  int st = 0;
  while (waitpid(child, &st, 0) < 0) {
    if (errno != EINTR) return AT_PTRACE_ERROR;
  }
  if (!WIFEXITED(st)) return AT_PTRACE_ERROR;
  switch (WEXITSTATUS(st)) {
    case 0: return AT_PTRACE_NOT_TRACED;
    case 1: return AT_PTRACE_TRACED;
    default: return AT_PTRACE_ERROR;
  }
}
