#include "gpulab/flag_checks.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "gpulab/cli.hpp"

namespace {

struct Outcome {
  int code;
  std::string err;
};

// Runs a program with one flag through run_program, as a lab's main does.
template <class T>
Outcome run_flag(const std::string& value, const CLI::Validator& check) {
  CLI::App app{"test"};
  T v{};
  app.add_option("--x", v)->check(check);
  std::vector<std::string> args{"prog", "--x", value};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  testing::internal::CaptureStderr();
  const int code = gpulab::run_program("prog", app, static_cast<int>(argv.size()), argv.data(),
                                       [] { return gpulab::kExitOk; });
  return {code, testing::internal::GetCapturedStderr()};
}

TEST(FiniteIn, RefusesNanInfinityAndOutOfRange) {
  for (const char* bad : {"nan", "NaN", "-nan", "inf", "-inf", "infinity", "1e400", "101", "-0.5",
                          "12x", "", "0x10"}) {
    const Outcome r = run_flag<double>(bad, gpulab::finite_in(0, 100));
    EXPECT_EQ(r.code, gpulab::kExitUsage) << bad;
    EXPECT_EQ(r.err, std::string("prog: error: --x: must be a finite number in [0, 100], got '") +
                         bad + "' (see --help)\n")
        << bad;
  }
  for (const char* good : {"0", "100", "50.5", "1e1", "0.001"})
    EXPECT_EQ(run_flag<double>(good, gpulab::finite_in(0, 100)).code, gpulab::kExitOk) << good;
}

TEST(WholeIn, UnsignedFlagsRefuseNegativeAndOutOfRangeInsteadOfSaturating) {
  // CLI11 alone reads both "-1" and 2^64 into a uint64_t as 2^64-1.
  for (const char* bad : {"-1", "18446744073709551616", "1e23", "1.5", "12x", "", " 1"}) {
    const Outcome r = run_flag<std::uint64_t>(bad, gpulab::whole_in<std::uint64_t>());
    EXPECT_EQ(r.code, gpulab::kExitUsage) << bad;
    EXPECT_EQ(r.err, std::string("prog: error: --x: must be a whole number in [0, 2^64-1], got '") +
                         bad + "' (see --help)\n")
        << bad;
  }
  EXPECT_EQ(run_flag<std::uint64_t>("18446744073709551615", gpulab::whole_in<std::uint64_t>()).code,
            gpulab::kExitOk);
  const Outcome r = run_flag<int>("0", gpulab::whole_in<int>(1, 64));
  EXPECT_EQ(r.err, "prog: error: --x: must be a whole number in [1, 64], got '0' (see --help)\n");
  EXPECT_EQ(run_flag<int>("-3", gpulab::whole_in<int>(-5, 5)).code, gpulab::kExitOk);
}

TEST(WholeIn, TheCommonSeedFlagUsesIt) {
  CLI::App app{"test"};
  gpulab::CommonOptions opts;
  gpulab::add_seed_flag(app, opts);
  std::vector<std::string> args{"prog", "--seed", "-1"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  testing::internal::CaptureStderr();
  EXPECT_EQ(gpulab::run_program("prog", app, 3, argv.data(), [] { return 0; }), gpulab::kExitUsage);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "prog: error: --seed: must be a whole number in [0, 2^64-1], got '-1' (see --help)\n");
}

TEST(FiniteNumberProblem, ServesValuesThatAreNotFlags) {
  EXPECT_EQ(gpulab::finite_number_problem("0.5", 0, 1), "");
  EXPECT_EQ(gpulab::finite_number_problem("nan", 0, 1), "must be a finite number in [0, 1], got 'nan'");
}

}  // namespace
