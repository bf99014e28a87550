// The EK enrolment round trip's four files and the vendor's checks without a
// TPM: testdata/attest/ek/ holds one round trip recorded from a swtpm
// manufactured with a local CA (request, challenge, the vendor's pending
// record, the answer, and the CA), so the parsers, the AK area check, the
// EK chain and step 4's comparison run on real bytes here. Also the signed
// ek-certified attestation policy and who may vouch for an AK.
#include "licensing/ek_enrolment.hpp"

#include <gtest/gtest.h>

#include <cctype>

#include "licensing/attestation.hpp"
#include "licensing/digest.hpp"
#include "licensing/ek_trust.hpp"
#include "licensing/record.hpp"
#include "test_support.hpp"

using namespace licensing;

namespace {

std::string sample(const std::string& name) {
  return testing_support::read("testdata/attest/ek/" + name);
}

std::string sha256_of(const Bytes& b) {
  return sha256_hex(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
}

// The message of the gpulab::UsageError `f` throws, or "" when it throws none.
template <typename F>
std::string refusal(F f) {
  try {
    f();
  } catch (const gpulab::UsageError& e) {
    return e.what();
  }
  return "";
}

// `text` with `from` replaced by `to` once; the request's digest recomputed when asked.
std::string edited(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}
std::string redigest(const std::string& text) {
  const auto at = text.rfind("digest: ");
  const std::string body = text.substr(0, at);
  return body + format_field("digest", sha256_hex(body));
}

TEST(EkEnrolment, TheRecordedSamplesParseCanonicallyAndAgree) {
  const std::string request_text = sample("request.txt");
  const EkEnrolRequest request = parse_ek_request(request_text);
  EXPECT_EQ(format_ek_request(request), request_text);
  const EkChallenge challenge = parse_ek_challenge(sample("challenge.txt"));
  EXPECT_EQ(format_ek_challenge(challenge), sample("challenge.txt"));
  const EkPending pending = parse_ek_pending(sample("pending.txt"));
  EXPECT_EQ(format_ek_pending(pending), sample("pending.txt"));
  const EkAnswer answer = parse_ek_answer(sample("answer.txt"));
  EXPECT_EQ(format_ek_answer(answer), sample("answer.txt"));

  // What the vendor derives from the request is what it recorded.
  const AkPublicArea ak = check_ak_public(request.ak_public);
  EXPECT_EQ(ak.name, request.ak_name) << "the TPM's name for the AK is sha256 of its area";
  EXPECT_EQ(challenge.ak_name, ak.name);
  EXPECT_EQ(pending.ak_sha256, ak_fingerprint(ak.der));
  EXPECT_EQ(pending.ek_sha256, sha256_of(request.ek_certificate));
  EXPECT_EQ(pending.challenge_id, challenge.challenge_id);
  EXPECT_EQ(answer.challenge_id, challenge.challenge_id);
  EXPECT_EQ(pending.golden, request.golden);
  const EkCaStore cas("testdata/attest/ek/ek-ca.pem");
  EXPECT_NE(cas.verify_ek(request.ek_certificate).find("BEGIN PUBLIC KEY"), std::string::npos);
  EXPECT_EQ(ek_certificate_der(ek_certificate_pem(request.ek_certificate)), request.ek_certificate);
}

TEST(EkEnrolment, TheRecordedAnswerCertifiesItsPendingRecordOnly) {
  const EkPending pending = parse_ek_pending(sample("pending.txt"));
  const EkAnswer answer = parse_ek_answer(sample("answer.txt"));
  const AttestPolicy p = certify_ek_answer(answer, pending, pending.issued, "answer.txt");
  EXPECT_EQ(p.trust, AkTrust::kEkCertified);
  EXPECT_EQ(p.ak_sha256, pending.ak_sha256);
  EXPECT_EQ(p.ek_sha256, pending.ek_sha256);
  EXPECT_EQ(p.golden, pending.golden);

  EkAnswer tampered = answer;
  tampered.secret[0] ^= 0x80;
  EXPECT_NE(refusal([&] { certify_ek_answer(tampered, pending, pending.issued, "a.txt"); })
                .find("a.txt: secret is not the one the credential wrapped"),
            std::string::npos);
  EkAnswer other_challenge = answer;
  other_challenge.challenge_id = std::string(32, '0');
  EXPECT_NE(refusal([&] { certify_ek_answer(other_challenge, pending, pending.issued, "a.txt"); })
                .find("(a replayed or stale answer)"),
            std::string::npos);
  EkAnswer other_licence = answer;
  other_licence.license_id = "ffffffffffffffff";
  EXPECT_NE(refusal([&] { certify_ek_answer(other_licence, pending, pending.issued, "a.txt"); })
                .find("a.txt is for licence ffffffffffffffff"),
            std::string::npos);
  // The age limit at its edge, and a clock before the challenge.
  const Date last{pending.issued.day + kEkChallengeMaxAgeDays};
  EXPECT_NO_THROW(certify_ek_answer(answer, pending, last, "a.txt"));
  EXPECT_NE(refusal([&] { certify_ek_answer(answer, pending, Date{last.day + 1}, "a.txt"); })
                .find("more than 30 days before"),
            std::string::npos);
  EXPECT_NE(
      refusal([&] { certify_ek_answer(answer, pending, Date{pending.issued.day - 1}, "a.txt"); })
          .find("after today"),
      std::string::npos);
}

TEST(EkEnrolment, MalformedRequestsAreRefused) {
  const std::string text = sample("request.txt");
  const EkEnrolRequest r = parse_ek_request(text);
  const std::string ak_hex = to_hex(r.ak_public);
  // Edited without the digest: caught as a corrupted transfer.
  std::string flipped = ak_hex;
  flipped[20] = flipped[20] == '0' ? '1' : '0';
  EXPECT_THROW(parse_ek_request(edited(text, ak_hex, flipped)), FormatError);
  // Edited with the digest: each field's own check.
  EXPECT_THROW(parse_ek_request(redigest(edited(text, "ak_name: 000b", "ak_name: 0004"))),
               FormatError);
  EXPECT_THROW(parse_ek_request(redigest(edited(text, ak_hex, ak_hex + "0"))), FormatError);
  EXPECT_THROW(parse_ek_request(redigest(edited(text, "pcrs: sha256:0,7,16", "pcrs: sha256:0,7"))),
               FormatError);
  // The EK certificate: one canonical PEM block, nothing else.
  EXPECT_THROW(parse_ek_request(redigest(edited(text, "ek_certificate: -----END CERTIFICATE-----\n",
                                                "ek_certificate: -----END CERTIFICATE-----\n"
                                                "ek_certificate: -----BEGIN CERTIFICATE-----\n"))),
               FormatError);
  const auto body = text.find("ek_certificate: MII");
  ASSERT_NE(body, std::string::npos);
  std::string rewrapped = text;  // the first PEM line split in two: same bytes, other spelling
  rewrapped.insert(body + 16 + 32, "\nek_certificate: ");
  EXPECT_NE(refusal([&] { parse_ek_request(redigest(rewrapped)); }).find("canonical PEM"),
            std::string::npos);
  std::string no_cert;  // every ek_certificate line dropped
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = text.find('\n', at) + 1;
    if (text.compare(at, 16, "ek_certificate: ") != 0) no_cert += text.substr(at, end - at);
    at = end;
  }
  EXPECT_NE(refusal([&] { parse_ek_request(redigest(no_cert)); }).find("no ek_certificate"),
            std::string::npos);
}

TEST(EkEnrolment, MalformedChallengesPendingRecordsAndAnswersAreRefused) {
  const std::string c = sample("challenge.txt");
  EXPECT_THROW(parse_ek_challenge(edited(c, "credential: ", "credential: !")), FormatError);
  EXPECT_THROW(parse_ek_challenge(edited(c, "challenge_id: ", "challenge_id: 0")), FormatError);
  EXPECT_THROW(parse_ek_challenge(c.substr(0, c.find("credential: "))), FormatError);
  const std::string p = sample("pending.txt");
  EXPECT_THROW(parse_ek_pending(edited(p, "secret_sha256: ", "secret_sha256: A")), FormatError);
  EXPECT_THROW(parse_ek_pending(p.substr(0, p.rfind("pcr_value: "))), FormatError);
  const std::string a = sample("answer.txt");
  const std::string secret = to_hex(parse_ek_answer(a).secret);
  EXPECT_THROW(parse_ek_answer(edited(a, secret, secret.substr(1))), FormatError);
  std::string upper = secret;
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (upper != secret) {
    EXPECT_THROW(parse_ek_answer(edited(a, secret, upper)), FormatError);
  }
  EXPECT_THROW(parse_ek_answer(a + "extra: 1\n"), FormatError);
}

TEST(EkEnrolment, OnlyARestrictedFixedTpmP256SigningAreaIsAnAk) {
  const Bytes area = parse_ek_request(sample("request.txt")).ak_public;
  Bytes decrypting = area;
  decrypting[7] |= 0x02;  // TPMA_OBJECT decrypt: bit 17
  EXPECT_NE(refusal([&] { check_ak_public(decrypting); }).find("restricted fixedTPM signing"),
            std::string::npos);
  Bytes movable = area;
  movable[9] &= static_cast<std::uint8_t>(~0x02);  // fixedTPM: bit 1
  EXPECT_THROW(check_ak_public(movable), gpulab::UsageError);
  EXPECT_THROW(check_ak_public(Bytes(area.begin(), area.end() - 1)), gpulab::UsageError);
  Bytes longer = area;
  longer.push_back(0);
  EXPECT_THROW(check_ak_public(longer), gpulab::UsageError);
  EXPECT_THROW(check_ak_public(Bytes(600, 0)), gpulab::UsageError);
}

AttestPolicy a_policy() {
  const EkPending pending = parse_ek_pending(sample("pending.txt"));
  return AttestPolicy{pending.license_id, pending.ak_sha256, pending.selection, pending.golden};
}

TEST(AttestPolicy, AnEkCertifiedPolicyIsSignedByTheVendorAndCheckedAgainstIt) {
  const PrivateKey vendor = testing_support::key("vendor");
  AttestPolicy p = a_policy();
  p.ek_sha256 = std::string(64, 'e');
  const std::string text = sign_policy(p, vendor);
  const AttestPolicy back = parse_policy(text);
  EXPECT_EQ(back.trust, AkTrust::kEkCertified);
  EXPECT_EQ(back.ek_sha256, p.ek_sha256);
  EXPECT_EQ(sign_policy(back, vendor), text);
  EXPECT_NO_THROW(check_policy_trust(back, vendor.public_key(), true, "policy.txt"));
  // Another vendor key, or one edited byte, is not the vendor's word.
  EXPECT_NE(refusal([&] {
              check_policy_trust(back, testing_support::key("other").public_key(), false, "p.txt");
            }).find("p.txt says ek-certified but is not signed by this vendor key"),
            std::string::npos);
  const AttestPolicy edited_golden =
      parse_policy(edited(text, "pcr_value: 0", "pcr_value: 1"));
  EXPECT_THROW(check_policy_trust(edited_golden, vendor.public_key(), false, "p.txt"),
               gpulab::UsageError);
  // A label without a signature is not even a policy.
  EXPECT_THROW(parse_policy(text.substr(0, text.find("key_id: "))), FormatError);
}

TEST(AttestPolicy, FirstUseIsLabelledAndRefusedOnlyWhenEkIsRequired) {
  const PrivateKey vendor = testing_support::key("vendor");
  const std::string text = format_policy(a_policy());
  EXPECT_NE(text.find("ak_trust: first-use\n"), std::string::npos);
  const AttestPolicy p = parse_policy(text);
  EXPECT_NO_THROW(check_policy_trust(p, vendor.public_key(), false, "p.txt"));
  EXPECT_NE(refusal([&] { check_policy_trust(p, vendor.public_key(), true, "p.txt"); })
                .find("p.txt trusts its attestation key on first use"),
            std::string::npos);
  EXPECT_THROW(parse_policy(edited(text, "ak_trust: first-use", "ak_trust: ek-certified")),
               FormatError);
  EXPECT_THROW(parse_policy(edited(text, "ak_trust: first-use", "ak_trust: trusted")), FormatError);
  // Version 1 said nothing about trust: refused, naming what to do.
  EXPECT_NE(refusal([&] {
              parse_policy(edited(edited(text, "gpulab-attest-policy: 2", "gpulab-attest-policy: 1"),
                                  "ak_trust: first-use\n", ""));
            }).find("enrol again"),
            std::string::npos);
}

}  // namespace
