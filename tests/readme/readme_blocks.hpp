// README blocks that must stay true. In a lab README:
//
//   <!-- gpulab-check: exact -->        (or: shape, and optionally exit=N)
//   ```text
//   $ simt-sim --flag
//   ...the program's stdout, pasted...
//   ```
//
// exact: the output must match byte for byte (trailing blanks ignored).
// shape: measured output; lines and words must match with every number
//        replaced by '#', so verdicts (PASS/FAIL) and labels still must match.
#pragma once

#include <string>
#include <vector>

namespace readme {

enum class Mode { kExact, kShape };

struct Block {
  Mode mode = Mode::kExact;
  int expected_exit = 0;
  std::string command;                 // without the "$ "
  std::vector<std::string> expected;   // the lines after the command
  std::size_t first_line = 0;          // 0-based index of the command line in the README
  std::size_t end_line = 0;            // index of the closing fence
};

// Throws std::runtime_error with "README:LINE: ..." for a malformed marker or block.
std::vector<Block> find_blocks(const std::vector<std::string>& readme_lines);

// Splits text into lines; a final newline does not make an extra empty line.
std::vector<std::string> split_lines(const std::string& text);

// Replaces every number (digits with optional sign, separators and decimals) by '#'.
std::string shape_of(const std::string& line);

// Empty when they match; otherwise a one-line description of the first difference.
std::string compare(const Block& block, const std::vector<std::string>& actual);

}  // namespace readme
