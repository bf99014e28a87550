// hog N: allocates and touches N MB in 1 MB steps, printing its progress, so
// that a memory cgroup's OOM kill shows where it struck. Statically linked:
// it runs inside a bare busybox rootfs that has no libc.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gpulab/stdout_check.hpp"

int main(int argc, char** argv) {
  const auto usage = [] {
    std::fprintf(stderr,
                 "hog: error: usage: hog N  (N = megabytes to allocate and touch, 1..1048576)\n");
    return 2;
  };
  if (argc == 2 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    std::printf(
        "hog N: allocate and touch N MB in 1 MB steps, printing progress every 10 MB.\n"
        "Run under a memory limit to watch the OOM killer strike (mininer run-limited 100 /hog "
        "200).\n");
    return 0;
  }
  if (argc != 2) return usage();
  errno = 0;
  char* end = nullptr;
  const unsigned long long n = std::strtoull(argv[1], &end, 10);
  if (errno != 0 || end == argv[1] || *end != '\0' || argv[1][0] == '-' || n == 0 || n > 1048576)
    return usage();

  constexpr std::size_t kStep = std::size_t{1} << 20;
  std::setvbuf(stdout, nullptr, _IONBF, 0);  // every progress line out before a SIGKILL
  for (unsigned long long mb = 1; mb <= n; ++mb) {
    void* block = std::malloc(kStep);
    if (block == nullptr) {
      std::fprintf(stderr, "hog: error: malloc failed after %llu MB\n", mb - 1);
      return 1;
    }
    // Untouched pages are never charged to the cgroup: write every one.
    std::memset(block, static_cast<int>(mb & 0xff), kStep);
    if (mb % 10 == 0 || mb == n) std::printf("hog: %llu MB\n", mb);
  }
  std::printf("hog: allocated and touched %llu MB\n", n);
  return gpulab::finish_stdout("hog", 0);
}
