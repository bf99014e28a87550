// The anti-tamper building blocks, linked into an (unsealed) test binary.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "antitamper/debugger.h"
#include "antitamper/hooks.h"
#include "antitamper/integrity.h"
#include "antitamper/key_check.h"
#include "antitamper/obfuscation.h"
#include "gpulab/rng.hpp"
#include "obf_strings.h"

namespace {

std::string make_key(const std::string& g1, const std::string& g2) {
  char buf[32];
  EXPECT_EQ(at_make_key("GPULAB-", g1.c_str(), g2.c_str(), buf, sizeof buf), 0);
  return buf;
}

TEST(KeyCheck, FlattenedAgreesWithPlainOnCraftedKeys) {
  const std::string good = make_key("1234", "ABCD");
  EXPECT_EQ(good, "GPULAB-1234-ABCD-4C1B");  // the key the README uses
  const char* cases[] = {good.c_str(), "GPULAB-1234-ABCD-0000", "GPULAB-1234-ABCD", "GPULAB-1234-abcd-0000",
                         "GPULAB1234-ABCD-0000", "", "G", "GPULAB-", "XPULAB-1234-ABCD-0000"};
  for (const char* k : cases) {
    EXPECT_EQ(at_key_check_flat(k, "GPULAB-"), at_key_check_plain(k, "GPULAB-")) << k;
  }
  EXPECT_EQ(at_key_check_plain(good.c_str(), "GPULAB-"), 1);
  EXPECT_EQ(at_license_key_ok(good.c_str()), 1);
  EXPECT_EQ(at_license_key_ok((good + "0").c_str()), 0);
}

TEST(KeyCheck, FlattenedAgreesWithPlainOnRandomKeys) {
  gpulab::Rng rng(7);
  const std::string alphabet = "0123456789ABCDEFabcdef-GPULAB ";
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string g1, g2;
    for (int k = 0; k < 4; ++k) g1 += "0123456789ABCDEF"[rng.uniform_int(0, 15)];
    for (int k = 0; k < 4; ++k) g2 += "0123456789ABCDEF"[rng.uniform_int(0, 15)];
    std::string key = make_key(g1, g2);
    // Corrupt most keys in one random place so both outcomes are exercised.
    if (rng.bernoulli(0.7)) {
      key[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(key.size() - 1)))] =
          alphabet[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(alphabet.size() - 1)))];
    }
    const int plain = at_key_check_plain(key.c_str(), "GPULAB-");
    ASSERT_EQ(at_key_check_flat(key.c_str(), "GPULAB-"), plain) << key;
    accepted += plain;
  }
  EXPECT_GT(accepted, 5000);
  EXPECT_LT(accepted, 15000);
}

TEST(KeyCheck, IssuerRejectsBadGroupsAndShortBuffers) {
  char buf[32];
  EXPECT_EQ(at_make_key("GPULAB-", "12345", "ABCD", buf, sizeof buf), -1);
  EXPECT_EQ(at_make_key("GPULAB-", "12g4", "ABCD", buf, sizeof buf), -1);
  EXPECT_EQ(at_make_key("GPULAB-", "1234", "ABCD", buf, 10), -1);
}

TEST(Obfuscation, StringsDecryptAndAreNotStoredInClear) {
  char buf[OBF_MSG_REJECTED_LEN + 1];
  at_deobfuscate(OBF_MSG_REJECTED, OBF_MSG_REJECTED_LEN, OBF_MSG_REJECTED_SEED, buf);
  EXPECT_STREQ(buf, "licence key rejected");
  const std::string stored(reinterpret_cast<const char*>(OBF_MSG_REJECTED), OBF_MSG_REJECTED_LEN);
  EXPECT_EQ(stored.find("licence"), std::string::npos);
  at_wipe(buf, sizeof buf);
  EXPECT_EQ(buf[0], '\0');
}

TEST(Debugger, TracerPidParsesStatusFiles) {
  const auto dir = std::filesystem::temp_directory_path() / ("tamper-status-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "untraced") << "Name:\tx\nState:\tR (running)\nTracerPid:\t0\nUid:\t0\n";
  std::ofstream(dir / "traced") << "Name:\tx\nTracerPid:\t4242\n";
  std::ofstream(dir / "garbage") << "TracerPid:\tabc\n";
  EXPECT_EQ(at_tracer_pid((dir / "untraced").c_str()), 0);
  EXPECT_EQ(at_tracer_pid((dir / "traced").c_str()), 4242);
  EXPECT_EQ(at_tracer_pid((dir / "garbage").c_str()), -1);
  EXPECT_EQ(at_tracer_pid((dir / "missing").c_str()), -1);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(at_tracer_pid("/proc/self/status"), 0);  // gtest is not run under a debugger in CI
}

TEST(Debugger, PtraceProbeSeesNoTracerHere) {
  const at_ptrace_verdict p = at_ptrace_probe();
  if (p == AT_PTRACE_RESTRICTED) GTEST_SKIP() << "Yama forbids the probe";
  EXPECT_EQ(p, AT_PTRACE_NOT_TRACED);
}

TEST(Hooks, CleanProcessAndFakeLdSoPreload) {
  const at_hook_report clean = at_check_hooks("/nonexistent-root");
  EXPECT_EQ(clean.ld_so_preload, 0);
  EXPECT_EQ(clean.symbols_hooked, 0) << clean.first_hook;
  EXPECT_GE(clean.symbols_checked, 6);
  const auto root = std::filesystem::temp_directory_path() / ("tamper-root-" + std::to_string(::getpid()));
  std::filesystem::create_directories(root / "etc");
  std::ofstream(root / "etc/ld.so.preload") << "/usr/lib/libevil.so\n";
  EXPECT_EQ(at_check_hooks(root.c_str()).ld_so_preload, 1);
  std::filesystem::remove_all(root);
}

TEST(Integrity, AnUnsealedBinaryIsReportedAsSuch) {
  const at_integrity_result r = at_verify_code_integrity();
  EXPECT_EQ(r.status, AT_INTEGRITY_UNSEALED);
  EXPECT_GT(r.size, 0u);  // the protected functions are linked into this test too
}

}  // namespace
