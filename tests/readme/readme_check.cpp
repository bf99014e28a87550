// gpulab-readme-check README.md --bin DIR --cwd DIR [--update]
// Runs every marked block's command (programs found in --bin, working
// directory --cwd) and compares its stdout with the README. --update rewrites
// the blocks with the real output instead (then review the diff!).
#include <fmt/core.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "gpulab/cli.hpp"
#include "readme_blocks.hpp"

namespace {

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

RunResult run_command(const std::string& command, const std::string& bin, const std::string& cwd) {
  char err_path[] = "/tmp/gpulab-readme-XXXXXX";
  const int fd = mkstemp(err_path);
  if (fd < 0) throw gpulab::RunError("cannot create a temporary file");
  close(fd);
  // The braces make the redirections apply to a whole pipeline (`prog | head`).
  const std::string shell =
      fmt::format("cd '{}' && export PATH='{}':\"$PATH\" && {{ {}\n}} 2>'{}' </dev/null", cwd, bin, command, err_path);
  RunResult r;
  FILE* pipe = popen(shell.c_str(), "r");
  if (!pipe) throw gpulab::RunError("cannot start: " + command);
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) r.out.append(buf, n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(err_path);
  std::stringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  std::remove(err_path);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Checks that a lab README's marked output blocks are what the programs print."};
  std::string readme_path, bin, cwd;
  bool update = false;
  app.add_option("readme", readme_path, "README.md to check")->required()->check(CLI::ExistingFile);
  app.add_option("--bin", bin, "Directory with the built programs")->required();
  app.add_option("--cwd", cwd, "Working directory for the commands")->required();
  app.add_flag("--update", update, "Rewrite the blocks with the programs' real output");

  return gpulab::run_program("gpulab-readme-check", app, argc, argv, [&] {
    std::ifstream in(readme_path);
    std::stringstream ss;
    ss << in.rdbuf();
    auto lines = readme::split_lines(ss.str());
    std::vector<readme::Block> blocks;
    try {
      blocks = readme::find_blocks(lines);
    } catch (const std::exception& e) {
      throw gpulab::UsageError(fmt::format("{}: {}", readme_path, e.what()));
    }
    if (blocks.empty())
      throw gpulab::RunError(readme_path + " has no '<!-- gpulab-check: ... -->' block: show real output");

    int failures = 0, skipped = 0;
    // Walk backwards so --update can splice lines without shifting later blocks.
    for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
      const auto& block = *it;
      const RunResult r = run_command(block.command, bin, cwd);
      // Benchmarks are not built in the sanitizer presets; any other missing program is a failure.
      if (r.exit_code == 127 && block.command.rfind("bench-", 0) == 0) {
        fmt::print("SKIP  $ {}  (benchmarks are not built in this preset)\n", block.command);
        ++skipped;
        continue;
      }
      if (r.exit_code == gpulab::kExitSkipped) {
        fmt::print("SKIP  $ {}  ({})\n", block.command, r.err.empty() ? "exit 77" : readme::split_lines(r.err).back());
        ++skipped;
        continue;
      }
      const auto actual = readme::split_lines(r.out);
      if (update) {
        lines.erase(lines.begin() + static_cast<long>(block.first_line) + 1, lines.begin() + static_cast<long>(block.end_line));
        lines.insert(lines.begin() + static_cast<long>(block.first_line) + 1, actual.begin(), actual.end());
        fmt::print("UPDATED  $ {}  (exit {})\n", block.command, r.exit_code);
        continue;
      }
      std::string why;
      if (r.exit_code != block.expected_exit)
        why = fmt::format("exit code {} (README expects {}); stderr: {}", r.exit_code, block.expected_exit, r.err);
      else
        why = readme::compare(block, actual);
      if (why.empty()) {
        fmt::print("PASS  $ {}\n", block.command);
      } else {
        ++failures;
        fmt::print("FAIL  $ {}\n  {}:{}: {}\n--- actual output ---\n{}---\n", block.command, readme_path,
                   block.first_line + 1, why, r.out);
      }
    }
    if (update) {
      std::ofstream out(readme_path);
      for (const auto& l : lines) out << l << '\n';
      return 0;
    }
    fmt::print("{} passed, {} failed, {} skipped\n", blocks.size() - static_cast<std::size_t>(failures + skipped), failures, skipped);
    if (failures) return gpulab::kExitCheckFailed;
    return skipped == static_cast<int>(blocks.size()) ? gpulab::kExitSkipped : gpulab::kExitOk;
  });
}
