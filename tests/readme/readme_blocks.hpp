// README blocks that must stay true. In a lab README:
//
//   <!-- gpulab-check: MODE [tol=T] [vary=CTX,...] [exit=N] -->
//   ```text
//   $ simt-sim --flag
//   ...what the program prints...
//   ```
//
// exact        byte for byte (trailing blanks ignored): deterministic output.
// shape        words must match one for one (alignment may move) and numbers are compared by
//              these rules (docs/testing.md):
//                - an integer (no '.' and no exponent: ranks, exit statuses, counts, sizes) is an
//                  identity and compares exactly, whatever the tolerance;
//                - a decimal (has '.' or an exponent: times, rates, ratios) compares exactly too,
//                  unless the block declares tol=P% (within P% of the README's value, or one unit
//                  in its last printed digit) or tol=any (it must be there and parse; any value);
//                - a number whose line text before it (blanks removed, earlier numbers as '#')
//                  ends with one of the vary=CTX contexts is measured: any value, integer or not
//                  (PIDs, racy counts, per-second figures).
// free-lines=L,A-B  (shape) those lines of the output (1-based) must be there but their text is
//              not compared: lines that describe the machine the check runs on (CPU, caches).
// exit=N       the program must exit N; when N != 0 the block shows stdout followed by stderr
//              (the error line), and both are compared.
#pragma once

#include <string>
#include <vector>

namespace readme {

enum class Mode { kExact, kShape };

struct Tolerance {
  enum class Kind { kNone, kRelative, kAny };
  Kind kind = Kind::kNone;
  double fraction = 0;  // kRelative: 0.25 for tol=25%
};

struct Block {
  Mode mode = Mode::kExact;
  Tolerance tol;
  std::vector<std::string> vary;        // contexts of measured numbers (shape only)
  std::vector<std::size_t> free_lines;  // 1-based output lines whose text is free (shape only)
  int expected_exit = 0;
  std::string command;                // without the "$ "
  std::vector<std::string> expected;  // the lines after the command
  std::size_t first_line = 0;         // 0-based index of the command line in the README
  std::size_t end_line = 0;           // index of the closing fence
};

// Throws std::runtime_error with "README:LINE: ..." for a malformed marker or block.
std::vector<Block> find_blocks(const std::vector<std::string>& readme_lines);

// Splits text into lines; a final newline does not make an extra empty line.
std::vector<std::string> split_lines(const std::string& text);

// Replaces every number (digits with optional sign, separators and decimals) by '#'.
std::string shape_of(const std::string& line);

// Empty when they match; otherwise a description of the first difference.
std::string compare(const Block& block, const std::vector<std::string>& actual);

// The lines a block is compared with: stdout, and for an exit=N != 0 block stderr after it.
std::vector<std::string> shown_output(const Block& block, const std::string& out,
                                      const std::string& err);

}  // namespace readme
