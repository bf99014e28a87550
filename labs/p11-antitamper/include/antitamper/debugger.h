/* Layer 2: is someone tracing us? Two independent signals. */
#ifndef ANTITAMPER_DEBUGGER_H
#define ANTITAMPER_DEBUGGER_H

#ifdef __cplusplus
extern "C" {
#endif

/* TracerPid from a /proc/<pid>/status file: 0 = not traced, -1 = unreadable. */
int at_tracer_pid(const char* status_path);

enum at_ptrace_verdict {
  AT_PTRACE_NOT_TRACED,   /* a child could attach to us: no other tracer holds us */
  AT_PTRACE_TRACED,       /* attach refused while ptrace is otherwise allowed */
  AT_PTRACE_RESTRICTED,   /* Yama ptrace_scope >= 2: the probe cannot tell */
  AT_PTRACE_ERROR
};

/* Forks a child that tries PTRACE_ATTACH on us and detaches again. */
enum at_ptrace_verdict at_ptrace_probe(void);

#ifdef __cplusplus
}
#endif
#endif
