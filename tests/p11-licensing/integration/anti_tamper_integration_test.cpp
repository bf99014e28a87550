// licensectl status --anti-tamper: the anti-tamper lab's layers in front of
// the real licence check. The build seals licensectl; one patched byte of the
// licence decision in a copy, a preloaded library or an unsealed program is TAMPERED.
#include <gtest/gtest.h>

#include <cstring>

#include "gpulab_test/elf_symbol.hpp"
#include "licensectl_run.hpp"
#include "licensing/license_gate.hpp"
#include "test_support.hpp"

using testing_support::read;
using testing_support::TempDir;
using testing_support::write;
using namespace testing_support::licensectl_run;

namespace {

class AntiTamper : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(run(dir_, "licensectl keygen --out vendor").code, 0);
    ASSERT_EQ(run(dir_,
                  "licensectl issue --key vendor.key --customer ACME --features serve --floating "
                  "--issued 2026-01-01 --expires 2026-12-31 --out a.lic")
                  .code,
              0);
  }
  TempDir dir_;
};

TEST_F(AntiTamper, TheSealedProgramPasses) {
  const Outcome r =
      run(dir_, "licensectl status a.lic --public-key vendor.pub --now 2026-06-01 --anti-tamper");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("VALID: valid through 2026-12-31"), std::string::npos) << r.out;
}

TEST_F(AntiTamper, OnePatchedByteOfTheLicenceCheckIsDetected) {
  std::string img = read(std::string(GPULAB_BIN_DIR) + "/licensectl");
  // One bit of the function that says whether a state permits use: the patch a cracker wants.
  const std::size_t at = gpulab_test::elf_function_file_offset(img, "state_permits_use",
                                                              gpulab_test::SymbolMatch::kContains);
  ASSERT_GT(at, 0u) << "symbol table missing (stripped binary?)";
  img[at + 1] = static_cast<char>(img[at + 1] ^ 0x01);
  write(dir_ / "licensectl-patched", img);
  std::filesystem::permissions(dir_ / "licensectl-patched", std::filesystem::perms::owner_all);
  const Outcome r = shell(
      dir_,
      "./licensectl-patched status a.lic --public-key vendor.pub --now 2026-06-01 --anti-tamper");
  EXPECT_EQ(r.code, 17) << r.out << r.err;
  EXPECT_NE(r.out.find("TAMPERED: code integrity: SHA-256 of the licence check's code ("),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("differs from the build-time seal (patched or breakpointed)"),
            std::string::npos)
      << r.out;
}

TEST_F(AntiTamper, APreloadedLibraryIsDetected) {
  // Any library will do: the gate refuses to decide under LD_PRELOAD at all.
  const Outcome r = shell(
      dir_, "ASAN_OPTIONS=verify_asan_link_order=0 LD_PRELOAD=libm.so.6 " +
                std::string(GPULAB_BIN_DIR) +
                "/licensectl status a.lic --public-key vendor.pub --now 2026-06-01 --anti-tamper");
  EXPECT_EQ(r.code, 17) << r.out << r.err;
  EXPECT_NE(r.out.find("TAMPERED: hooks: LD_PRELOAD is set"), std::string::npos) << r.out;
  // Without --anti-tamper nothing changes.
  EXPECT_EQ(shell(dir_, "ASAN_OPTIONS=verify_asan_link_order=0 LD_PRELOAD=libm.so.6 " +
                            std::string(GPULAB_BIN_DIR) +
                            "/licensectl status a.lic --public-key vendor.pub --now 2026-06-01")
                .code,
            0);
}

TEST_F(AntiTamper, AnUnsealedProgramCannotVouchForItself) {
  // This test executable links the same gate but was never sealed.
  licensing::GateOptions o;
  o.license_file = dir_ / "a.lic";
  o.public_key_file = dir_ / "vendor.pub";
  o.clock = [] { return testing_support::noon("2026-06-01"); };
  o.fingerprint = [](std::string_view) { return licensing::Fingerprint{}; };
  o.anti_tamper = true;
  const licensing::LicenseGate gate(o);
  EXPECT_FALSE(gate.allows_use());
  EXPECT_EQ(gate.check().evaluation.state, licensing::LicenseState::kTampered);
  EXPECT_EQ(gate.check().evaluation.message,
            "code integrity: this program was never sealed (tamperseal), so its licence check "
            "cannot be verified");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "a.lic.state")) << "a TAMPERED check records nothing";
  o.anti_tamper = false;
  EXPECT_TRUE(licensing::LicenseGate(o).allows_use());
}

}  // namespace
