// What every gpulab program and library shares about failing: the exit codes, the
// three exception types that map onto them, and the one-line error format. Kept apart
// from cli.hpp so that code which only throws or reports does not compile CLI11
// (about ten seconds per translation unit here: CLI11 2.1 builds its validators in
// every file that includes it).
#pragma once

#include <stdexcept>
#include <string_view>

namespace gpulab {

// Exit codes (docs/conventions.md): ctest treats 77 as "skipped".
inline constexpr int kExitOk = 0;           // ran, every built-in check passed
inline constexpr int kExitCheckFailed = 1;  // a built-in check or a run failed (a FAIL line says which)
inline constexpr int kExitUsage = 2;        // bad usage or bad input
inline constexpr int kExitSkipped = 77;     // cannot run on this machine (reason on stderr)

// Bad flags, malformed files, absurd sizes: exit 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A run that started and then failed (a check, a runtime fault in the modelled machine): exit 1.
struct RunError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// The machine lacks something the program needs (GPU, root, kernel headers): exit 77.
struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "<program>: error: <message>" on stderr.
void print_error(std::string_view program, std::string_view message);
// "<program>: SKIPPED: <reason>" on stderr.
void print_skipped(std::string_view program, std::string_view reason);

}  // namespace gpulab
