// Running the lab's programs from the licensing integration tests: a shell
// command in a scratch folder with both streams captured, and a fake host tree.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <ctime>
#include <string>

#include "test_support.hpp"

namespace testing_support::licensectl_run {

struct Outcome {
  int code = -1;
  std::string out, err;
};

// sign-activation stamps the bound licence with the vendor's real date, so status checks
// after an activation must ask about a day no earlier than that.
inline std::string today_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &utc);
  return buf;
}

// Runs a shell command in `dir`, capturing both streams.
inline Outcome shell(const testing_support::TempDir& dir, const std::string& command) {
  const std::string cmd =
      "cd '" + dir.path().string() + "' && " + command + " >out.txt 2>err.txt </dev/null";
  const int status = std::system(cmd.c_str());
  Outcome r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = testing_support::read(dir / "out.txt");
  r.err = testing_support::read(dir / "err.txt");
  return r;
}

// Runs one of the lab's programs: "licensectl status ...".
inline Outcome run(const testing_support::TempDir& dir, const std::string& args) {
  return shell(dir, std::string(GPULAB_BIN_DIR) + "/" + args);
}

inline void fake_host(const std::filesystem::path& root, const std::string& id) {
  testing_support::write(root / "etc/machine-id", id + "\n");
  testing_support::write(root / "proc/cpuinfo", "model name\t: Test CPU\nflags\t\t: sse2 avx2\n");
  testing_support::write(root / "sys/class/dmi/id/product_uuid",
                         "6c1f0e2a-9b8d-4c3e-a1f2-" + id.substr(0, 12) + "\n");
}

// The attestation tests' starting point: a vendor key pair (vendor.key, vendor.pub) and a
// floating entitlement licence signed with it (ent.lic, id 00112233aabbccdd, feature serve).
inline ::testing::AssertionResult vendor_and_entitlement(const testing_support::TempDir& dir) {
  if (const Outcome keys = run(dir, "licensectl keygen --out vendor"); keys.code != 0)
    return ::testing::AssertionFailure() << "keygen: exit " << keys.code << ": " << keys.err;
  const Outcome ent =
      run(dir,
          "licensectl issue --key vendor.key --customer ACME --features serve --floating "
          "--issued 2026-01-01 --expires 2099-12-31 --id 00112233aabbccdd --out ent.lic");
  if (ent.code != 0) return ::testing::AssertionFailure() << "issue: exit " << ent.code << ": " << ent.err;
  return ::testing::AssertionSuccess();
}

// The error block of a refused command: exactly one line, from licensectl, exit 2, naming `needle`.
inline ::testing::AssertionResult one_error_line(const Outcome& r, const std::string& needle) {
  if (r.code != 2)
    return ::testing::AssertionFailure() << "exit " << r.code << ", stderr: " << r.err;
  if (r.err.rfind("licensectl: error: ", 0) != 0 || r.err.find('\n') != r.err.size() - 1)
    return ::testing::AssertionFailure() << "not one error line: " << r.err;
  if (r.err.find(needle) == std::string::npos)
    return ::testing::AssertionFailure() << "'" << needle << "' not in: " << r.err;
  return ::testing::AssertionSuccess();
}

}  // namespace testing_support::licensectl_run
