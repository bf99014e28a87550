#include "gpulab/cli.hpp"

#include <fmt/core.h>
#include <stdio_ext.h>

#include <cstdio>
#include <system_error>

#include "gpulab/flag_checks.hpp"
#include "gpulab/stdout_check.hpp"
#include "gpulab/version.hpp"

namespace gpulab {

void add_json_flag(CLI::App& app, CommonOptions& opts) {
  app.add_flag("--json", opts.json, "Print the results as one JSON document instead of tables");
}

void add_quick_flag(CLI::App& app, CommonOptions& opts, std::string_view what_quick_means) {
  app.add_flag("--quick", opts.quick, std::string(what_quick_means));
}

void add_seed_flag(CLI::App& app, CommonOptions& opts) {
  app.add_option("--seed", opts.seed, "Seed of the random generator (same seed, same output)")
      ->capture_default_str()
      ->check(whole_in<std::uint64_t>());  // "-1" and "1e23" are typos, not 2^64-1
}

void print_error(std::string_view program, std::string_view message) {
  fmt::print(stderr, "{}: error: {}\n", program, message);
}

void print_skipped(std::string_view program, std::string_view reason) {
  fmt::print(stderr, "{}: SKIPPED: {}\n", program, reason);
}

namespace {

int run_body(std::string_view program, CLI::App& app, int argc, char** argv,
             const std::function<int()>& body) {
  // Every program: "--version" prints "<program> <version>" on stdout and exits 0.
  app.set_version_flag("--version", version_line(program),
                       "Print the program name and gpulab's version, then exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    print_error(program, fmt::format("{} (see --help)", e.what()));
    return kExitUsage;
  }
  try {
    return body();
  } catch (const UsageError& e) {
    print_error(program, e.what());
    return kExitUsage;
  } catch (const Unsupported& e) {
    print_skipped(program, e.what());
    return kExitSkipped;
  } catch (const std::system_error& e) {
    // fmt::print throws this when stdio could not write a full buffer.
    if (std::ferror(stdout) != 0) {
      print_error(program, fmt::format("cannot write standard output: {}", e.code().message()));
      // Reported: drop what is still buffered so finish_stdout does not report it again.
      __fpurge(stdout);
      std::clearerr(stdout);
    } else {
      print_error(program, e.what());
    }
    return kExitCheckFailed;
  } catch (const std::exception& e) {
    print_error(program, e.what());
    return kExitCheckFailed;
  }
}

}  // namespace

int run_program(std::string_view program, CLI::App& app, int argc, char** argv,
                const std::function<int()>& body) {
  hold_standard_streams();
  // Help text and results alike: output that never arrived is a failed run.
  return finish_stdout(program, run_body(program, app, argc, argv, body));
}

}  // namespace gpulab
