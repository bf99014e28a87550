// The attestation key certified through the TPM vendor's EK certificate by
// the vendor, across the air gap: the four-step file round trip
// (attest-ek-request, attest-ek-challenge, attest-ek-answer, attest-ek-certify)
// through licensectl against software TPMs manufactured by swtpm_setup with a
// local CA (swtpm_localca, state in the test's temp dir). The good round trip
// ends in an activation that needs the ek-certified policy; the refusals: an
// EK chain from another CA (step 2), TPM A answering a challenge made for
// TPM B (step 3), a tampered answer and a replayed one (step 4), a software
// key posing as the AK, a relabelled or re-pointed policy (sign-activation).
// Skipped, with the reason, where swtpm, swtpm-tools or tpm2-tools are not
// installed.
#include <gtest/gtest.h>

#include <algorithm>

#include "gpulab/errors.hpp"
#include "licensectl_run.hpp"
#include "licensing/attestation.hpp"
#include "licensing/digest.hpp"
#include "licensing/ek_enrolment.hpp"
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
namespace fs = std::filesystem;

namespace {

Bytes bytes_of(const std::string& s) {
  return Bytes(s.begin(), s.end());
}

class EkEnrolment : public ::testing::Test {
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
    fake_host(dir_ / "host", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    ASSERT_TRUE(vendor_and_entitlement(dir_));
  }

  // The four steps, each as its side runs it.
  Outcome ek_request(const SwTpm& tpm, const std::string& out = "ek-request.txt") {
    return run(dir_, "licensectl attest-ek-request --license ent.lic --pcrs sha256:0,7,16 --tcti " +
                         tpm.tcti() + " --out " + out);
  }
  Outcome ek_challenge(const std::string& request = "ek-request.txt",
                       const std::string& ca = "ek-ca.pem",
                       const std::string& pending = "ek-pending.txt",
                       const std::string& out = "ek-challenge.txt") {
    return run(dir_, "licensectl attest-ek-challenge " + request + " --ek-ca " + ca +
                         " --pending " + pending + " --out " + out);
  }
  Outcome ek_answer(const SwTpm& tpm, const std::string& challenge = "ek-challenge.txt",
                    const std::string& out = "ek-answer.txt") {
    return run(dir_, "licensectl attest-ek-answer " + challenge + " --tcti " + tpm.tcti() +
                         " --out " + out);
  }
  Outcome ek_certify(const std::string& answer = "ek-answer.txt",
                     const std::string& pending = "ek-pending.txt",
                     const std::string& extra = "") {
    return run(dir_, "licensectl attest-ek-certify " + answer + " --pending " + pending +
                         " --key vendor.key --out policy.txt " + extra);
  }
  // Steps 1-4 on `tpm`, each expected to succeed.
  void round_trip(const SwTpm& tpm) {
    for (const Outcome& r : {ek_request(tpm), ek_challenge(), ek_answer(tpm), ek_certify()})
      ASSERT_EQ(r.code, 0) << r.err;
  }
  // A quoted activation against `policy`, as sign-activation checks it.
  Outcome activate_with(const std::string& policy, const std::string& extra = "") {
    const Outcome c =
        run(dir_, "licensectl attest-challenge --policy " + policy + " --out challenge.txt");
    if (c.code != 0) return c;
    const Outcome q = run(dir_,
                          "licensectl activate-request --license ent.lic --root host --challenge "
                          "challenge.txt --tcti " +
                              tpm_.tcti() + " --out request.txt");
    if (q.code != 0) return q;
    return run(dir_, "licensectl sign-activation request.txt --key vendor.key --license ent.lic "
                     "--attest-policy " +
                         policy + " --challenge challenge.txt --out activation.lic " + extra);
  }
  std::string tpm_ak_sha256(const SwTpm& tpm) {
    return licensing::ak_fingerprint(licensing::TpmTools(tpm.tcti()).ak_public());
  }

  TempDir dir_;
  SwTpm tpm_;
};

TEST_F(EkEnrolment, TheFourStepRoundTripCertifiesTheAkAndActivates) {
  const Outcome req = ek_request(tpm_);
  ASSERT_EQ(req.code, 0) << req.err;
  // The request decides nothing: it carries the TPM's claims for the vendor to check.
  const std::string request_text = read(dir_ / "ek-request.txt");
  EXPECT_NE(request_text.find("ek_certificate: -----BEGIN CERTIFICATE-----"), std::string::npos);
  EXPECT_EQ(request_text.find("ak_trust"), std::string::npos);

  const Outcome chal = ek_challenge();
  ASSERT_EQ(chal.code, 0) << chal.err;
  EXPECT_NE(chal.out.find("EK certificate verified against ek-ca.pem"), std::string::npos)
      << chal.out;
  EXPECT_EQ(testing_support::mode_of(dir_ / "ek-pending.txt"), 0600u);
  const licensing::EkPending pending = licensing::parse_ek_pending(read(dir_ / "ek-pending.txt"));
  EXPECT_EQ(pending.ak_sha256, tpm_ak_sha256(tpm_));

  const Outcome ans = ek_answer(tpm_);
  ASSERT_EQ(ans.code, 0) << ans.err;
  // The secret the TPM recovered is the one whose hash the vendor kept.
  const licensing::EkAnswer answer = licensing::parse_ek_answer(read(dir_ / "ek-answer.txt"));
  EXPECT_EQ(licensing::sha256_hex(std::string(answer.secret.begin(), answer.secret.end())),
            pending.secret_sha256);
  EXPECT_EQ(read(dir_ / "ek-challenge.txt").find(licensing::to_hex(answer.secret)),
            std::string::npos)
      << "the secret does not travel to the customer in clear";

  const Outcome cert = ek_certify();
  ASSERT_EQ(cert.code, 0) << cert.err;
  EXPECT_NE(cert.out.find("ek-certified for licence 00112233aabbccdd"), std::string::npos)
      << cert.out;
  EXPECT_FALSE(fs::exists(dir_ / "ek-pending.txt")) << "the pending record is used up";
  const licensing::AttestPolicy policy = licensing::parse_policy(read(dir_ / "policy.txt"));
  EXPECT_EQ(policy.trust, licensing::AkTrust::kEkCertified);
  EXPECT_EQ(policy.ak_sha256, tpm_ak_sha256(tpm_));

  const Outcome signed_ = activate_with("policy.txt", "--require-ek-certified");
  ASSERT_EQ(signed_.code, 0) << signed_.err;
  EXPECT_NE(signed_.out.find("TPM quote over sha256:0,7,16 verified"), std::string::npos)
      << signed_.out;
}

TEST_F(EkEnrolment, AFirstUsePolicyIsRefusedWhenEkCertificationIsRequired) {
  const Outcome enrol =
      run(dir_, "licensectl attest-enroll --license ent.lic --pcrs sha256:0,7,16 --tcti " +
                    tpm_.tcti() + " --out tofu.txt");
  ASSERT_EQ(enrol.code, 0) << enrol.err;
  EXPECT_NE(enrol.out.find("attestation key: trusted on first use (ak_trust: first-use"),
            std::string::npos)
      << enrol.out;
  // The trust-on-first-use path still activates where the vendor allows it ...
  ASSERT_EQ(activate_with("tofu.txt").code, 0);
  fs::remove(dir_ / "activation.lic");
  // ... and is refused where it does not.
  const Outcome r = activate_with("tofu.txt", "--require-ek-certified");
  EXPECT_TRUE(one_error_line(r, "tofu.txt trusts its attestation key on first use"));
  EXPECT_FALSE(fs::exists(dir_ / "activation.lic"));
}

TEST_F(EkEnrolment, APolicyRelabelledOrRepointedByTheCustomerIsRefused) {
  // Relabelled: a first-use policy dressed as ek-certified, signed by a key of the customer's own.
  ASSERT_EQ(run(dir_, "licensectl attest-enroll --license ent.lic --pcrs sha256:0,7,16 --tcti " +
                          tpm_.tcti() + " --out tofu.txt")
                .code,
            0);
  licensing::AttestPolicy p = licensing::parse_policy(read(dir_ / "tofu.txt"));
  p.ek_sha256 = std::string(64, 'e');
  write(dir_ / "relabelled.txt", licensing::sign_policy(p, testing_support::key("customer")));
  EXPECT_TRUE(one_error_line(activate_with("relabelled.txt"),
                             "relabelled.txt says ek-certified but is not signed by this vendor key"));
  // Re-pointed: the vendor's ek-certified policy with another AK's fingerprint edited in.
  round_trip(tpm_);
  std::string text = read(dir_ / "policy.txt");
  const std::string ak = tpm_ak_sha256(tpm_);
  text.replace(text.find(ak), ak.size(), std::string(64, 'a'));
  write(dir_ / "edited.txt", text);
  EXPECT_TRUE(one_error_line(activate_with("edited.txt"),
                             "edited.txt says ek-certified but is not signed by this vendor key"));
  EXPECT_FALSE(fs::exists(dir_ / "activation.lic"));
}

TEST_F(EkEnrolment, AnEkChainFromAnotherCaIsRefusedAtStep2) {
  ASSERT_EQ(ek_request(tpm_).code, 0);
  // Another CA with the very same name as the TPM vendor's: only the signature differs.
  const Outcome ca = shell(dir_,
                           "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
                           "-subj /CN=swtpm-localca -days 30 -keyout other.key -out other-ca.pem");
  ASSERT_EQ(ca.code, 0) << ca.err;
  EXPECT_TRUE(one_error_line(ek_challenge("ek-request.txt", "other-ca.pem"),
                             "ek-request.txt: the TPM's EK certificate does not chain to "
                             "other-ca.pem: "));
  EXPECT_FALSE(fs::exists(dir_ / "ek-challenge.txt"));
  EXPECT_FALSE(fs::exists(dir_ / "ek-pending.txt"));
}

TEST_F(EkEnrolment, TpmAsAnswerToAChallengeForTpmBIsRefused) {
  ASSERT_EQ(testing_support::manufacture_tpm(dir_ / "tpm-b", dir_ / "tpm-vendor-ca"), "");
  SwTpm b;
  ASSERT_EQ(b.start(dir_ / "tpm-b"), "");
  // A genuine request from B, by the same TPM vendor, and the vendor's challenge for it.
  ASSERT_EQ(ek_request(b, "b-request.txt").code, 0);
  ASSERT_EQ(ek_challenge("b-request.txt", "ek-ca.pem", "b-pending.txt", "b-challenge.txt").code, 0);
  // TPM A is handed B's challenge.
  EXPECT_TRUE(one_error_line(ek_answer(tpm_, "b-challenge.txt"), "a challenge made for another TPM"));
  // With the AK name edited to A's, A's TPM still cannot unwrap what was wrapped for B's EK.
  licensing::EkChallenge forged = licensing::parse_ek_challenge(read(dir_ / "b-challenge.txt"));
  forged.ak_name = licensing::TpmTools(tpm_.tcti()).ak_area().name;
  write(dir_ / "forged-challenge.txt", licensing::format_ek_challenge(forged));
  EXPECT_TRUE(one_error_line(ek_answer(tpm_, "forged-challenge.txt"),
                             "forged-challenge.txt: this TPM cannot activate the credential"));
  EXPECT_FALSE(fs::exists(dir_ / "ek-answer.txt"));
  // A's answer to its own challenge, presented for B: another challenge ...
  for (const Outcome& r : {ek_request(tpm_), ek_challenge(), ek_answer(tpm_)})
    ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(one_error_line(ek_certify("ek-answer.txt", "b-pending.txt"),
                             "(a replayed or stale answer)"));
  // ... and with B's challenge id written in, A's secret is not B's.
  licensing::EkAnswer a = licensing::parse_ek_answer(read(dir_ / "ek-answer.txt"));
  a.challenge_id = licensing::parse_ek_pending(read(dir_ / "b-pending.txt")).challenge_id;
  write(dir_ / "a-as-b.txt", licensing::format_ek_answer(a));
  EXPECT_TRUE(one_error_line(ek_certify("a-as-b.txt", "b-pending.txt"),
                             "a-as-b.txt: secret is not the one the credential wrapped"));
  EXPECT_TRUE(fs::exists(dir_ / "b-pending.txt")) << "a refusal keeps the pending record";
}

TEST_F(EkEnrolment, ATamperedAnswerIsRefusedAndTheGenuineOneStillCertifies) {
  for (const Outcome& r : {ek_request(tpm_), ek_challenge(), ek_answer(tpm_)})
    ASSERT_EQ(r.code, 0) << r.err;
  licensing::EkAnswer a = licensing::parse_ek_answer(read(dir_ / "ek-answer.txt"));
  a.secret[31] ^= 1;
  write(dir_ / "tampered.txt", licensing::format_ek_answer(a));
  EXPECT_TRUE(one_error_line(ek_certify("tampered.txt"),
                             "tampered.txt: secret is not the one the credential wrapped"));
  EXPECT_FALSE(fs::exists(dir_ / "policy.txt"));
  // A malformed answer: one line naming the file and the field.
  std::string text = read(dir_ / "ek-answer.txt");
  write(dir_ / "short.txt", text.substr(0, text.find("secret: ") + 20) + "\n");
  EXPECT_TRUE(one_error_line(ek_certify("short.txt"), "short.txt: line 4: secret must be 64"));
  const Outcome good = ek_certify();
  EXPECT_EQ(good.code, 0) << good.err;
}

TEST_F(EkEnrolment, AnAnswerReplayedAgainstASecondChallengeIsRefused) {
  round_trip(tpm_);
  const std::string old_answer = read(dir_ / "ek-answer.txt");
  write(dir_ / "old-answer.txt", old_answer);
  // Once used, the pending record is gone: the same answer cannot certify twice.
  EXPECT_TRUE(one_error_line(ek_certify("old-answer.txt"), "ek-pending.txt"));
  // A second challenge for the same request: the old answer is for the first.
  ASSERT_EQ(ek_challenge().code, 0);
  EXPECT_TRUE(one_error_line(ek_certify("old-answer.txt"), "(a replayed or stale answer)"));
  // The old secret under the new challenge's id.
  licensing::EkAnswer a = licensing::parse_ek_answer(old_answer);
  a.challenge_id = licensing::parse_ek_pending(read(dir_ / "ek-pending.txt")).challenge_id;
  write(dir_ / "renamed.txt", licensing::format_ek_answer(a));
  EXPECT_TRUE(one_error_line(ek_certify("renamed.txt"),
                             "renamed.txt: secret is not the one the credential wrapped"));
}

TEST_F(EkEnrolment, AStaleAnswerIsRefused) {
  ASSERT_EQ(ek_request(tpm_).code, 0);
  const Outcome chal = run(dir_,
                           "licensectl attest-ek-challenge ek-request.txt --ek-ca ek-ca.pem "
                           "--pending ek-pending.txt --out ek-challenge.txt --today 2026-01-01");
  ASSERT_EQ(chal.code, 0) << chal.err;
  ASSERT_EQ(ek_answer(tpm_).code, 0);
  EXPECT_TRUE(one_error_line(ek_certify("ek-answer.txt", "ek-pending.txt", "--today 2026-02-01"),
                             "was made on 2026-01-01, more than 30 days before 2026-02-01"));
  const Outcome in_time =
      ek_certify("ek-answer.txt", "ek-pending.txt", "--today 2026-01-31");
  EXPECT_EQ(in_time.code, 0) << in_time.err;
}

TEST_F(EkEnrolment, ASoftwareKeyPosingAsTheAkIsRefused) {
  ASSERT_EQ(ek_request(tpm_).code, 0);
  const licensing::EkEnrolRequest genuine =
      licensing::parse_ek_request(read(dir_ / "ek-request.txt"));
  // A P-256 key made in software, dressed in the AK's template and attributes,
  // under the genuine EK certificate, with its name computed correctly.
  const Outcome key = shell(dir_,
                            "openssl ecparam -name prime256v1 -genkey -noout -out soft.pem && "
                            "openssl pkey -in soft.pem -pubout -outform der -out soft.der");
  ASSERT_EQ(key.code, 0) << key.err;
  const Bytes soft_der = bytes_of(read(dir_ / "soft.der"));
  ASSERT_EQ(soft_der.size(), 91u);
  licensing::EkEnrolRequest forged = genuine;  // ... 0x0020 x(32) 0x0020 y(32) at the end
  std::copy(soft_der.end() - 64, soft_der.end() - 32, forged.ak_public.end() - 66);
  std::copy(soft_der.end() - 32, soft_der.end(), forged.ak_public.end() - 32);
  forged.ak_name = licensing::check_ak_public(forged.ak_public).name;
  write(dir_ / "soft-request.txt", licensing::format_ek_request(forged));
  // The vendor cannot tell from the files alone, so it makes the credential ...
  ASSERT_EQ(ek_challenge("soft-request.txt").code, 0);
  // ... which the customer's program refuses to answer with another key ...
  EXPECT_TRUE(one_error_line(ek_answer(tpm_), "a challenge made for another TPM"));
  // ... and the TPM itself refuses, since no object with that name is loaded.
  const licensing::EkChallenge c = licensing::parse_ek_challenge(read(dir_ / "ek-challenge.txt"));
  EXPECT_THROW(licensing::TpmTools(tpm_.tcti()).activate_credential(c.credential),
               gpulab::RunError);
  // Without the secret, any answer is refused: here one of all zeros.
  licensing::EkAnswer guess{c.license_id, c.challenge_id, Bytes(32, 0)};
  write(dir_ / "guess.txt", licensing::format_ek_answer(guess));
  EXPECT_TRUE(one_error_line(ek_certify("guess.txt"), "guess.txt: secret is not the one"));

  // An AK area a TPM would make only for an exportable key: refused at step 2.
  licensing::EkEnrolRequest unrestricted = genuine;
  unrestricted.ak_public[7] &= static_cast<std::uint8_t>(~0x01);  // TPMA_OBJECT restricted: bit 16
  unrestricted.ak_name = licensing::check_ak_public(genuine.ak_public).name;
  write(dir_ / "unrestricted.txt", licensing::format_ek_request(unrestricted));
  EXPECT_TRUE(one_error_line(ek_challenge("unrestricted.txt", "ek-ca.pem", "p2.txt", "c2.txt"),
                             "unrestricted.txt: the AK is not a restricted fixedTPM signing key"));
  // A name that is not the hash of the area: refused at step 2.
  licensing::EkEnrolRequest misnamed = genuine;
  misnamed.ak_name[33] ^= 1;
  write(dir_ / "misnamed.txt", licensing::format_ek_request(misnamed));
  EXPECT_TRUE(one_error_line(ek_challenge("misnamed.txt", "ek-ca.pem", "p3.txt", "c3.txt"),
                             "misnamed.txt: ak_name "));
  EXPECT_FALSE(fs::exists(dir_ / "p2.txt") || fs::exists(dir_ / "p3.txt"));
}

TEST_F(EkEnrolment, BadInputToEachStepIsOneErrorLineAndWritesNothing) {
  EXPECT_TRUE(one_error_line(ek_challenge("nowhere.txt"), "nowhere.txt"));
  ASSERT_EQ(ek_request(tpm_).code, 0);
  EXPECT_TRUE(one_error_line(ek_challenge("ek-request.txt", "nowhere.pem"), "--ek-ca nowhere.pem: "));
  write(dir_ / "garbage.pem", "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n");
  EXPECT_TRUE(one_error_line(ek_challenge("ek-request.txt", "garbage.pem"),
                             "--ek-ca garbage.pem: no PEM certificate"));
  EXPECT_TRUE(one_error_line(ek_challenge("ek-request.txt", "ek-ca.pem", "same.txt", "same.txt"),
                             "--out and --pending name the same file"));
  // A request cut short in transfer.
  const std::string text = read(dir_ / "ek-request.txt");
  write(dir_ / "cut.txt", text.substr(0, text.rfind("ek_certificate: ")));
  EXPECT_TRUE(one_error_line(ek_challenge("cut.txt"), "cut.txt: "));
  EXPECT_FALSE(fs::exists(dir_ / "ek-challenge.txt") || fs::exists(dir_ / "ek-pending.txt") ||
               fs::exists(dir_ / "same.txt"));
}

}  // namespace
