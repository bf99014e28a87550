// gpulab::hold_standard_streams: a program started with stdout closed (`>&-`)
// must not hand fd 1 to the next file it opens, or its report lands in that
// file (the device plugin's walkthrough wrote into a directory fd: EINVAL).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "gpulab/stdout_check.hpp"

namespace {

// Runs `body` in a child with fd 1 closed; its exit status.
template <typename F>
int in_child_without_stdout(F body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(1);
    ::_exit(body());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

TEST(HoldStandardStreams, AClosedStdoutIsNotReusedAndWritesStillFail) {
  EXPECT_EQ(in_child_without_stdout([] {
              gpulab::hold_standard_streams();
              const int fd = ::open("/dev/null", O_RDONLY);
              if (fd == 1) return 1;                       // the next open took stdout's number
              if (::fcntl(1, F_GETFD) == -1) return 2;     // fd 1 is held
              if (::write(1, "x", 1) != -1 || errno != EBADF) return 3;  // and still unwritable
              return 0;
            }),
            0);
}

TEST(HoldStandardStreams, WithoutItTheNextOpenTakesFdOne) {
  // The hazard itself, so the test above cannot pass for a reason of its own.
  EXPECT_EQ(in_child_without_stdout([] { return ::open("/dev/null", O_RDONLY) == 1 ? 0 : 1; }), 0);
}

TEST(HoldStandardStreams, OpenStreamsAreLeftAlone) {
  const int before = ::fcntl(1, F_GETFL);
  gpulab::hold_standard_streams();
  EXPECT_EQ(::fcntl(1, F_GETFL), before);
}

}  // namespace
