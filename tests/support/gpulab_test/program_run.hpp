// Integration tests run a lab's program as a user would and look at its
// output and exit code. One helper for every lab's tests.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

namespace gpulab_test {

struct ProgramRun {
  int exit_code = -1;  // -1: could not start, or killed by a signal
  std::string out;     // stdout (and stderr too, with Stderr::kMerged)
  std::string err;     // stderr (empty with Stderr::kMerged)
};

enum class Stderr { kSeparate, kMerged };

// Runs a shell command line (a pipeline, a tool such as nm or mpirun) and keeps its output
// and exit status the same way run_program does for a lab program.
inline ProgramRun run_command(const std::string& command_line, Stderr mode = Stderr::kSeparate) {
  ProgramRun r;
  char err_path[] = "/tmp/gpulab-test-stderr-XXXXXX";  // unique: ctest runs tests in parallel
  const int fd = mkstemp(err_path);
  if (fd < 0) return r;
  close(fd);
  const std::string redirect = mode == Stderr::kMerged ? " 2>&1" : std::string(" 2>'") + err_path + "'";
  const std::string cmd = "{ " + command_line + "\n}" + redirect;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
    const int status = pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::ifstream in(err_path);
  r.err.assign(std::istreambuf_iterator<char>(in), {});
  std::remove(err_path);
  return r;
}

// Runs GPULAB_BIN_DIR/<program> <args> through the shell (args may quote);
// `env` is a prefix such as "env PATH=/nonexistent".
inline ProgramRun run_program(const std::string& program, const std::string& args,
                              Stderr mode = Stderr::kSeparate, const std::string& env = "") {
  return run_command(env + " " + std::string(GPULAB_BIN_DIR) + "/" + program + " " + args, mode);
}

}  // namespace gpulab_test
