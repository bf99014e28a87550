// gpulab-readme-check README.md --bin DIR --cwd DIR [--bench-built] [--update]
// Runs every marked block's command (programs found in --bin, working directory
// --cwd, bash -o pipefail) and compares what it prints with the README under the
// block's rules (readme_blocks.hpp, docs/testing.md). --update rewrites the
// blocks with the real output instead (then review the diff!).
// Exit: 0 every block passed or some skipped, 1 a block failed, 77 every block skipped.
#include <fmt/core.h>

#include <fstream>
#include <sstream>

#include "gpulab/cli.hpp"
#include "readme_blocks.hpp"
#include "readme_run.hpp"

int main(int argc, char** argv) {
  CLI::App app{"Checks that a lab README's marked output blocks are what the programs print."};
  std::string readme_path, bin, cwd;
  bool update = false;
  readme::Options options;
  app.add_option("readme", readme_path, "README.md to check")->required()->check(CLI::ExistingFile);
  app.add_option("--bin", bin, "Directory with the built programs")->required();
  app.add_option("--cwd", cwd, "Working directory for the commands")->required();
  app.add_flag("--bench-built", options.bench_built,
               "This preset builds the bench-* programs: a missing one fails instead of skipping");
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
      throw gpulab::RunError(readme_path +
                             " has no '<!-- gpulab-check: ... -->' block: show real output");

    std::vector<readme::Verdict> verdicts(blocks.size());
    // Walk backwards so --update can splice lines without shifting earlier blocks.
    for (std::size_t i = blocks.size(); i-- > 0;) {
      const auto& block = blocks[i];
      const readme::RunResult r = readme::run_command(block.command, bin, cwd);
      if (update) {
        const auto actual = readme::shown_output(block, r.out, r.err);
        const auto at = lines.begin() + static_cast<long>(block.first_line) + 1;
        lines.erase(at, lines.begin() + static_cast<long>(block.end_line));
        lines.insert(lines.begin() + static_cast<long>(block.first_line) + 1, actual.begin(),
                     actual.end());
        fmt::print("UPDATED  $ {}  (exit {}; the marker's exit= is not changed)\n", block.command,
                   r.exit_code);
        continue;
      }
      verdicts[i] = readme::judge(block, r, options);
      const auto& v = verdicts[i];
      if (v.outcome == readme::Outcome::kPass) {
        fmt::print("PASS  $ {}\n", block.command);
      } else if (v.outcome == readme::Outcome::kSkip) {
        fmt::print("SKIP  $ {}  ({})\n", block.command, v.why);
      } else {
        fmt::print("FAIL  $ {}\n  {}:{}: {}\n--- stdout ---\n{}--- stderr ---\n{}---\n",
                   block.command, readme_path, block.first_line + 1, v.why, r.out, r.err);
      }
    }
    if (update) {
      std::ofstream out(readme_path);
      for (const auto& l : lines) out << l << '\n';
      return 0;
    }
    int passed = 0, failed = 0, skipped = 0;
    for (const auto& v : verdicts) {
      passed += v.outcome == readme::Outcome::kPass;
      failed += v.outcome == readme::Outcome::kFail;
      skipped += v.outcome == readme::Outcome::kSkip;
    }
    fmt::print("{} passed, {} failed, {} skipped\n", passed, failed, skipped);
    for (std::size_t i = 0; i < blocks.size(); ++i)
      if (verdicts[i].outcome == readme::Outcome::kSkip)
        fmt::print("skipped: {}:{}: $ {}  ({})\n", readme_path, blocks[i].first_line + 1,
                   blocks[i].command, verdicts[i].why);
    const int code = readme::readme_exit_code(verdicts);
    if (code == gpulab::kExitSkipped)
      fmt::print(stderr, "gpulab-readme-check: SKIPPED: every block skipped\n");
    return code;
  });
}
