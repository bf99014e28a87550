// The behaviour every gpulab program shares: exit codes, the one-line error
// format, the common flags (--json, --seed, --quick), and a main() wrapper that
// turns exceptions into the right exit code.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
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

struct CommonOptions {
  bool json = false;
  bool quick = false;
  std::uint64_t seed = 1;
};

void add_json_flag(CLI::App& app, CommonOptions& opts);
void add_quick_flag(CLI::App& app, CommonOptions& opts, std::string_view what_quick_means);
void add_seed_flag(CLI::App& app, CommonOptions& opts);

// "<program>: error: <message>" on stderr.
void print_error(std::string_view program, std::string_view message);
// "<program>: SKIPPED: <reason>" on stderr.
void print_skipped(std::string_view program, std::string_view reason);

// Parses argv into `app`, runs `body`, and maps what escapes to an exit code:
// help → 0, parse errors and UsageError → 2, RunError and other exceptions → 1,
// Unsupported → 77. `body` returns the exit code of a normal run.
int run_program(std::string_view program, CLI::App& app, int argc, char** argv,
                const std::function<int()>& body);

}  // namespace gpulab
