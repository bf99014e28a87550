// The curriculum's client: the test suite of a fakegpu device. The first four
// ioctls are INFO, ALLOC(1 MiB), SUBMIT, WAIT (the trace the lab compares with
// CUDA's); then every check prints "PASS <name>  <detail>" or "FAIL ...".
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "fakegpu/device.hpp"

namespace fakegpu {

enum class Verdict { kPass, kFail, kSkip };

struct CheckResult {
  std::string name;
  Verdict verdict = Verdict::kFail;
  std::string detail;
};

struct ClientReport {
  std::vector<CheckResult> checks;
  int passed() const;
  int failed() const;
  int skipped() const;
  bool all_passed() const { return failed() == 0 && passed() > 0; }
};

// Runs every check against `path`, printing each line to `out` as it completes
// (nullptr: silent). Stops early only when the device cannot be opened.
ClientReport run_client_checks(Device& dev, const std::string& path, std::FILE* out);

// The fence page by polling: SUBMIT, then spin on the mmap'd completed_seq
// with acquire loads until it reaches the seqno. Used by the client check and
// the waits-per-second comparison. Returns polls spun, or -errno.
long poll_fence(Device& dev, int fd, const volatile void* page, unsigned long long seqno);

}  // namespace fakegpu
