// Running a README block's command and judging the result (gpulab-readme-check).
#pragma once

#include <string>
#include <vector>

#include "readme_blocks.hpp"

namespace readme {

struct RunResult {
  int exit_code = -1;  // 128+N when killed by signal N
  std::string out;
  std::string err;
};

// Runs `command` with bash -o pipefail (a pipeline fails when any part of it fails) in `cwd`,
// with `bin` first on PATH and stdin from /dev/null.
RunResult run_command(const std::string& command, const std::string& bin, const std::string& cwd);

struct Options {
  bool bench_built = false;  // this preset builds bench-* programs: a missing one is a failure
};

enum class Outcome { kPass, kFail, kSkip };

struct Verdict {
  Outcome outcome = Outcome::kPass;
  std::string why;  // kFail: what differs; kSkip: the reason
};

// exit 77 (when the block does not expect 77) is a skip with stderr's last line as the reason;
// a missing bench-* program (exit 127) is a skip only when benchmarks are not built.
Verdict judge(const Block& block, const RunResult& result, const Options& options);

// 1 when any block failed, 77 when every block skipped, 0 otherwise.
int readme_exit_code(const std::vector<Verdict>& verdicts);

}  // namespace readme
