// The attestation key trusted through the TPM vendor's EK certificate instead
// of on first use: TPMs manufactured by swtpm_setup with a local CA
// (swtpm_localca, state in the test's temp dir), enrollment that verifies the
// EK chain and binds the AK by credential activation, and the refusals: an EK
// certificate from another CA, a software key posing as the AK, an AK from
// another TPM, and a missing or garbage --ek-ca. Skipped, with the reason,
// where swtpm, swtpm-tools or tpm2-tools are not installed.
#include <gtest/gtest.h>

#include <algorithm>

#include "gpulab/errors.hpp"
#include "licensectl_run.hpp"
#include "licensing/digest.hpp"
#include "licensing/ek_trust.hpp"
#include "licensing/tpm_tools.hpp"
#include "swtpm_process.hpp"
#include "test_support.hpp"

using testing_support::read;
using testing_support::SwTpm;
using testing_support::TempDir;
using testing_support::write;
using namespace testing_support::licensectl_run;
using licensing::Bytes;

namespace {

Bytes bytes_of(const std::string& s) {
  return Bytes(s.begin(), s.end());
}

class EkTrust : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const std::string& why :
         {testing_support::swtpm_missing(), testing_support::swtpm_manufacture_missing()})
      if (!why.empty()) GTEST_SKIP() << why;
    ASSERT_EQ(testing_support::manufacture_tpm(dir_ / "tpm-a", dir_ / "tpm-vendor-ca"), "");
    ASSERT_EQ(tpm_.start(dir_ / "tpm-a"), "");
    const std::string bundle = testing_support::ek_ca_bundle(dir_ / "tpm-vendor-ca");
    ASSERT_FALSE(bundle.empty());
    write(dir_ / "ek-ca.pem", bundle);
    ASSERT_EQ(run(dir_, "licensectl keygen --out vendor").code, 0);
    const Outcome ent =
        run(dir_,
            "licensectl issue --key vendor.key --customer ACME --features serve --floating "
            "--issued 2026-01-01 --expires 2099-12-31 --id 00112233aabbccdd --out ent.lic");
    ASSERT_EQ(ent.code, 0) << ent.err;
  }
  Outcome enroll(const std::string& extra) {
    return run(dir_, "licensectl attest-enroll --license ent.lic --pcrs sha256:0,7 --tcti " +
                         tpm_.tcti() + " --out policy.txt " + extra);
  }

  TempDir dir_;
  SwTpm tpm_;
};

TEST_F(EkTrust, AVerifiedChainAndActivationEnrol) {
  const Outcome r = enroll("--ek-ca ek-ca.pem");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("attestation key: EK certificate verified against ek-ca.pem, attestation "
                       "key bound to that EK by credential activation"),
            std::string::npos)
      << r.out;
  const std::string ak = licensing::ak_fingerprint(licensing::TpmTools(tpm_.tcti()).ak_public());
  EXPECT_NE(read(dir_ / "policy.txt").find("ak_sha256: " + ak), std::string::npos)
      << read(dir_ / "policy.txt");
}

TEST_F(EkTrust, WithoutEkCaTheKeyIsTrustedOnFirstUseAndSaysSo) {
  const Outcome r = enroll("");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("attestation key: trusted on first use (no --ek-ca)"), std::string::npos)
      << r.out;
}

TEST_F(EkTrust, AnEkCertificateFromAnotherCaIsRefusedNamingTheChain) {
  // Another CA with the very same name as the TPM vendor's: only the signature differs.
  const Outcome ca = shell(dir_,
                           "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
                           "-subj /CN=swtpm-localca -days 30 -keyout other.key -out other-ca.pem");
  ASSERT_EQ(ca.code, 0) << ca.err;
  EXPECT_TRUE(one_error_line(enroll("--ek-ca other-ca.pem"),
                             "the TPM's EK certificate does not chain to other-ca.pem: "));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "policy.txt"));
}

TEST_F(EkTrust, ASoftwareKeyPosingAsTheAkFailsActivation) {
  const licensing::TpmTools machine(tpm_.tcti());
  const licensing::EkCaStore cas((dir_ / "ek-ca.pem").string());
  const Bytes ak_der = machine.ak_public();
  const Bytes ak_public = machine.ak_tpm_public();
  // The genuine pair binds (the control for what follows).
  EXPECT_NO_THROW(licensing::bind_ak_to_certified_ek(machine, cas, ak_der, ak_public));
  // A P-256 key made in software, dressed in the AK's template and attributes.
  const Outcome key = shell(dir_,
                            "openssl ecparam -name prime256v1 -genkey -noout -out soft.pem && "
                            "openssl pkey -in soft.pem -pubout -outform der -out soft.der");
  ASSERT_EQ(key.code, 0) << key.err;
  const Bytes soft_der = bytes_of(read(dir_ / "soft.der"));
  ASSERT_EQ(soft_der.size(), 91u);
  Bytes forged = ak_public;  // ... 0x0020 x(32) 0x0020 y(32) at the end
  std::copy(soft_der.end() - 64, soft_der.end() - 32, forged.end() - 66);
  std::copy(soft_der.end() - 32, soft_der.end(), forged.end() - 32);
  try {
    licensing::bind_ak_to_certified_ek(machine, cas, soft_der, forged);
    ADD_FAILURE() << "a software key was bound to the TPM's EK";
  } catch (const gpulab::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("credential activation failed, so the AK is not resident"),
              std::string::npos)
        << e.what();
  }
  // The software key's DER with the real AK's public area: refused before any TPM work.
  EXPECT_THROW(licensing::ak_tpm_name(ak_public, soft_der), gpulab::UsageError);
}

TEST_F(EkTrust, AnAkFromAnotherTpmFailsActivation) {
  ASSERT_EQ(testing_support::manufacture_tpm(dir_ / "tpm-b", dir_ / "tpm-vendor-ca"), "");
  SwTpm other;
  ASSERT_EQ(other.start(dir_ / "tpm-b"), "");
  const licensing::TpmTools a(tpm_.tcti()), b(other.tcti());
  const licensing::EkCaStore cas((dir_ / "ek-ca.pem").string());
  // Both EK certificates are genuine: the same vendor made both TPMs.
  const std::string ek_a = cas.verify_ek(a.ek_certificate());
  ASSERT_FALSE(cas.verify_ek(b.ek_certificate()).empty());
  // TPM A's certificate presented with TPM B's attestation key.
  const Bytes name_b = licensing::ak_tpm_name(b.ak_tpm_public(), b.ak_public());
  const Bytes secret = licensing::random_bytes(32);
  const Bytes credential = licensing::make_credential(ek_a, name_b, secret);
  EXPECT_THROW(b.activate_credential(credential), gpulab::RunError) << "B does not hold A's EK";
  EXPECT_THROW(a.activate_credential(credential), gpulab::RunError) << "A holds no object B's AK";
  // The control: for A's own AK, A recovers the secret.
  const Bytes name_a = licensing::ak_tpm_name(a.ak_tpm_public(), a.ak_public());
  EXPECT_EQ(a.activate_credential(licensing::make_credential(ek_a, name_a, secret)), secret);
}

TEST_F(EkTrust, AMissingOrGarbageEkCaIsOneErrorLine) {
  EXPECT_TRUE(one_error_line(enroll("--ek-ca nowhere.pem"), "--ek-ca nowhere.pem: "));
  write(dir_ / "garbage.pem", "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n");
  EXPECT_TRUE(
      one_error_line(enroll("--ek-ca garbage.pem"), "--ek-ca garbage.pem: no PEM certificate"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "policy.txt"));
}

}  // namespace
