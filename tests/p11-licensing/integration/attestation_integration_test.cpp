// Activation that requires a TPM quote, end to end through licensectl against
// software TPMs the tests start themselves (swtpm_process.hpp): a good quote
// activates; a changed PCR, a replayed quote and a quote by another TPM's key
// are refused with one line saying which. Skipped, with the reason, where
// swtpm or tpm2-tools are not installed.
#include <gtest/gtest.h>

#include "licensectl_run.hpp"
#include "licensing/activation.hpp"
#include "licensing/attestation.hpp"
#include "licensing/record.hpp"
#include "swtpm_process.hpp"
#include "test_support.hpp"

using testing_support::read;
using testing_support::SwTpm;
using testing_support::TempDir;
using testing_support::write;
using namespace testing_support::licensectl_run;
using licensing::ActivationRequest;
using licensing::format_request;
using licensing::parse_request;

namespace {

class Attestation : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = testing_support::swtpm_missing(); !why.empty()) GTEST_SKIP() << why;
    ASSERT_EQ(tpm_.start(dir_ / "tpm-a"), "");
    fake_host(dir_ / "host", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    ASSERT_TRUE(vendor_and_entitlement(dir_));
    // A PCR the test can move, next to two that firmware would have measured.
    extend(tpm_, "16", "01");
    const Outcome enrol =
        run(dir_, "licensectl attest-enroll --license ent.lic --pcrs sha256:0,7,16 --tcti " +
                      tpm_.tcti() + " --out policy.txt");
    ASSERT_EQ(enrol.code, 0) << enrol.err;
  }

  void extend(const SwTpm& tpm, const std::string& pcr, const std::string& last_byte) {
    const Outcome r = shell(dir_, "tpm2_pcrextend -T " + tpm.tcti() + " " + pcr +
                                      ":sha256=" + std::string(62, '0') + last_byte);
    ASSERT_EQ(r.code, 0) << r.err;
  }
  Outcome challenge() {
    return run(dir_, "licensectl attest-challenge --policy policy.txt --out challenge.txt");
  }
  Outcome request(const SwTpm& tpm, const std::string& out = "request.txt") {
    return run(dir_,
               "licensectl activate-request --license ent.lic --root host --challenge "
               "challenge.txt --tcti " +
                   tpm.tcti() + " --out " + out);
  }
  Outcome sign(const std::string& request_file = "request.txt") {
    return run(dir_, "licensectl sign-activation " + request_file +
                         " --key vendor.key --license ent.lic --attest-policy policy.txt "
                         "--challenge challenge.txt "
                         "--out activation.lic");
  }

  TempDir dir_;
  SwTpm tpm_;
};

TEST_F(Attestation, AGoodQuoteActivates) {
  ASSERT_EQ(challenge().code, 0);
  const Outcome req = request(tpm_);
  ASSERT_EQ(req.code, 0) << req.err;
  EXPECT_NE(req.out.find("TPM quote over sha256:0,7,16"), std::string::npos) << req.out;
  const Outcome signed_ = sign();
  ASSERT_EQ(signed_.code, 0) << signed_.err;
  EXPECT_NE(signed_.out.find("TPM quote over sha256:0,7,16 verified"), std::string::npos)
      << signed_.out;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "challenge.txt")) << "the challenge is used up";
  const Outcome act =
      run(dir_,
          "licensectl activate activation.lic --request request.txt --public-key vendor.pub "
          "--root host --out server.lic");
  ASSERT_EQ(act.code, 0) << act.err;
  EXPECT_EQ(run(dir_, "licensectl status server.lic --public-key vendor.pub --root host --now " +
                          today_utc())
                .code,
            0);
}

TEST_F(Attestation, AChangedPcrIsRefusedNamingIt) {
  extend(tpm_, "16", "02");  // the machine booted something else
  ASSERT_EQ(challenge().code, 0);
  ASSERT_EQ(request(tpm_).code, 0);
  const Outcome r = sign();
  EXPECT_TRUE(one_error_line(r, "PCR 16 (sha256) is ")) << r.err;
  EXPECT_NE(r.err.find("the golden value in policy.txt is"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "activation.lic"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "challenge.txt"))
      << "a refusal does not use up the challenge";
}

TEST_F(Attestation, AReplayedQuoteIsRefused) {
  ASSERT_EQ(challenge().code, 0);
  ASSERT_EQ(request(tpm_, "old-request.txt").code, 0);
  ASSERT_EQ(sign("old-request.txt").code, 0);
  // Later: a new challenge, answered with the old request (and its quote).
  ASSERT_EQ(challenge().code, 0);
  EXPECT_TRUE(one_error_line(sign("old-request.txt"), "(a replayed or stale quote)"));
  // The same, with the request's nonce edited to the new one: the TPM signed the old.
  ActivationRequest forged = parse_request(read(dir_ / "old-request.txt"));
  forged.nonce = licensing::parse_challenge(read(dir_ / "challenge.txt")).nonce;
  write(dir_ / "forged.txt", format_request(forged));
  EXPECT_TRUE(one_error_line(sign("forged.txt"), "(a replayed quote)"));
}

TEST_F(Attestation, AQuoteByAnotherTpmsKeyIsRefused) {
  SwTpm other;
  ASSERT_EQ(other.start(dir_ / "tpm-b"), "");
  extend(other, "16", "01");  // the same measured state, another TPM
  ASSERT_EQ(challenge().code, 0);
  ASSERT_EQ(request(other, "request-b.txt").code, 0);
  EXPECT_TRUE(one_error_line(sign("request-b.txt"), "is not the one enrolled in policy.txt"));
  // The enrolled AK's public half with the other TPM's quote: the signature does not verify.
  ASSERT_EQ(request(tpm_, "request-a.txt").code, 0);
  ActivationRequest spliced = parse_request(read(dir_ / "request-b.txt"));
  spliced.quote->ak_public = parse_request(read(dir_ / "request-a.txt")).quote->ak_public;
  write(dir_ / "spliced.txt", format_request(spliced));
  EXPECT_TRUE(one_error_line(sign("spliced.txt"), "signed by another TPM's key?"));
}

TEST_F(Attestation, ARequestWithoutAQuoteIsRefusedWhenThePolicyNeedsOne) {
  ASSERT_EQ(challenge().code, 0);
  ASSERT_EQ(
      run(dir_, "licensectl activate-request --license ent.lic --root host --out plain.txt").code,
      0);
  EXPECT_TRUE(
      one_error_line(sign("plain.txt"), "carries no TPM quote and policy.txt requires one"));
}

TEST_F(Attestation, AnUnreachableTpmIsOneErrorLine) {
  ASSERT_EQ(challenge().code, 0);
  SwTpm gone;
  ASSERT_EQ(gone.start(dir_ / "tpm-gone"), "");
  const std::string tcti = gone.tcti();
  gone.stop();
  const Outcome r =
      run(dir_,
          "licensectl activate-request --license ent.lic --root host --challenge challenge.txt "
          "--tcti " +
              tcti + " --out r.txt");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("licensectl: error: tpm2_createprimary failed (exit ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "r.txt"));
}

}  // namespace
