// The last thing a program does before exiting: make sure its standard output
// really got written. stdio buffers it, so `prog > /dev/full` or a closed
// stdout only fails at the final flush, which exit() does silently: the
// program would report success after losing all its output.
//
// Header-only and free of fmt, so that the statically linked tools (fakegpu's,
// mininer's hog), which cannot link gpulab::common, share the same check.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string_view>

namespace gpulab {

// The first thing a program does: a standard stream it was started without
// (`prog >&-`) gets /dev/null opened read-only in its place. Otherwise the next
// file or socket the program opens takes that number, and its output lands
// there: the device plugin's walkthrough wrote its report into a gRPC socket.
// Read-only keeps writes failing (EBADF), so finish_stdout still reports them.
inline void hold_standard_streams() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int held = ::open("/dev/null", O_RDONLY);  // the lowest free number: `fd` itself
    if (held >= 0 && held != fd) ::close(held);       // fd was taken meanwhile (another thread)
  }
}

// Flushes stdout (C stdio, which fmt::print and printf use) and std::cout. When
// either failed, prints "<program>: error: cannot write standard output: <why>"
// and returns 1 if `exit_code` was 0 (the run failed after all), else `exit_code`.
inline int finish_stdout(std::string_view program, int exit_code) {
  errno = 0;
  const bool flush_failed = std::fflush(stdout) != 0;
  const int why = errno;
  std::cout.flush();  // synced with stdio by default, so normally nothing is left here
  if (!flush_failed && std::ferror(stdout) == 0 && !std::cout.bad()) return exit_code;
  // A write that failed earlier left only the error flag; its errno is long gone.
  const char* reason = flush_failed && why != 0 ? std::strerror(why) : "an earlier write failed";
  std::fprintf(stderr, "%.*s: error: cannot write standard output: %s\n",
               static_cast<int>(program.size()), program.data(), reason);
  std::clearerr(stdout);  // reported once; a later check starts clean
  std::cout.clear();
  return exit_code == 0 ? 1 : exit_code;
}

}  // namespace gpulab
