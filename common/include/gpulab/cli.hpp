// The command line every gpulab program shares: the common flags (--json, --seed,
// --quick) and a main() wrapper that turns exceptions into the right exit code.
// Exit codes, exception types and the error line are in errors.hpp: include that
// instead where no CLI::App is in sight.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <string_view>

#include "gpulab/common_options.hpp"
#include "gpulab/errors.hpp"

namespace gpulab {

void add_json_flag(CLI::App& app, CommonOptions& opts);
void add_quick_flag(CLI::App& app, CommonOptions& opts, std::string_view what_quick_means);
void add_seed_flag(CLI::App& app, CommonOptions& opts);

// Parses argv into `app`, runs `body`, and maps what escapes to an exit code:
// help → 0, parse errors and UsageError → 2, RunError and other exceptions → 1,
// Unsupported → 77. `body` returns the exit code of a normal run.
int run_program(std::string_view program, CLI::App& app, int argc, char** argv,
                const std::function<int()>& body);

}  // namespace gpulab
