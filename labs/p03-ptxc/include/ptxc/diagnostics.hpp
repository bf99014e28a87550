// Compiler-style error reporting: "FILE:LINE:COL: error: message", then the
// offending source line and a caret under the column. Every front-end stage
// reports into one Diagnostics so a run can show several errors at once.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ptxc {

struct SourceLoc {
  int line = 1;  // 1-based
  int col = 1;   // 1-based, in bytes
};

struct Diagnostic {
  SourceLoc loc;
  std::string message;
};

class Diagnostics {
 public:
  Diagnostics(std::string file_name, std::string_view source);

  void error(SourceLoc loc, std::string message);
  [[nodiscard]] bool has_errors() const { return !errors_.empty(); }
  [[nodiscard]] const std::vector<Diagnostic>& errors() const { return errors_; }
  // All errors, each as three lines: location + message, source line, caret.
  [[nodiscard]] std::string render() const;

  // Past this many errors the front end stops (a runaway file is not a report).
  static constexpr std::size_t kMaxErrors = 20;
  // Source shown under an error: at most this many columns of its line, around the caret.
  static constexpr std::size_t kMaxShownColumns = 160;

 private:
  std::string file_;
  std::vector<std::string> lines_;
  std::vector<Diagnostic> errors_;
};

// Thrown by compile() when the front end reported errors; what() is render().
struct CompileError : std::runtime_error {
  CompileError(const std::string& rendered, std::size_t count)
      : std::runtime_error(rendered), error_count(count) {}
  std::size_t error_count;
};

}  // namespace ptxc
