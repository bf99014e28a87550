// The quote verifier without a TPM: a real quote recorded from swtpm 0.7.1
// (tpm2_quote over sha256:0,7,16 after one tpm2_pcrextend of PCR 16) as a
// test vector, each check's refusal, and the strict PCR-list and quote parsers.
#include "licensing/tpm_quote.hpp"

#include <gtest/gtest.h>

#include "licensing/activation.hpp"
#include "licensing/attestation.hpp"
#include "licensing/record.hpp"
#include "test_support.hpp"

using namespace licensing;

namespace {

Bytes hex(std::string_view h) {
  return *from_hex(h);
}

const Bytes kAk =
    hex("3059301306072a8648ce3d020106082a8648ce3d0301070342000407006c4241311a80e55043648e8f591be6f6"
        "dad04fbf16"
        "4727d0dcfeb14fd6f0acb1aed6938ac0e94811a005fc227d2d49c3365a4baf3eba9c01476c79148e3a");
const Bytes kAttest =
    hex("ff54434780180022000b278a25944359fd7a7944d0a36f1f8d235d4a241a212d9cd462ca7641106ed8c7001000"
        "1122334455"
        "66778899aabbccddeeff0000000000001bf21c5880c6064b085801d060e78140e47fb300000001000b03810001"
        "00203e6b79"
        "6058822b50d3e3cb0ff0af869377bf51f7d4eca99e861041231ac976ec");
const Bytes kSignature =
    hex("0018000b0020e104747983b96be3a1f2efc3b47d4610f241778589632b6e182913be8f7596f1002079cebd6bed"
        "9e76859f50"
        "4188f089a8671f5b2c6ba7f3a8d1046deeb82b1831d7");
const Bytes kNonce = hex("00112233445566778899aabbccddeeff");
const Bytes kZero(32, 0);
const Bytes kPcr16 = hex("90f4b39548df55ad6187a1d20d731ecee78c545b94afd16f42ef7592d99cd365");

TpmQuote recorded() {
  return TpmQuote{kAk,
                  parse_pcr_selection("sha256:0,7,16", "test"),
                  {kZero, kZero, kPcr16},
                  kAttest,
                  kSignature};
}

std::string refusal(const TpmQuote& q, const Bytes& nonce, const std::vector<Bytes>& golden) {
  try {
    verify_quote(q, nonce, parse_pcr_selection("sha256:0,7,16", "test"), golden, "policy.txt");
  } catch (const std::exception& e) {
    return e.what();
  }
  return "accepted";
}

TEST(TpmQuote, TheRecordedQuoteVerifies) {
  EXPECT_EQ(refusal(recorded(), kNonce, {kZero, kZero, kPcr16}), "accepted");
  const QuoteInfo info = parse_quote_info(kAttest);
  EXPECT_EQ(info.extra_data, kNonce);
  EXPECT_EQ(format_pcr_selection(info.selection), "sha256:0,7,16");
}

TEST(TpmQuote, EachCheckRefusesWithItsReason) {
  EXPECT_EQ(refusal(recorded(), kNonce, {kZero, kZero, kZero}),
            "PCR 16 (sha256) is 90f4b39548df55ad..., the golden value in policy.txt is "
            "0000000000000000...: "
            "the machine's measured state changed");
  EXPECT_EQ(refusal(recorded(), hex("ffeeddccbbaa99887766554433221100"), {kZero, kZero, kPcr16}),
            "the quote was made for nonce 0011223344556677..., not this challenge's "
            "ffeeddccbbaa9988... (a "
            "replayed quote)");
  TpmQuote edited = recorded();
  edited.pcr_values[2] = kZero;  // claims the golden value; the TPM signed the real one
  EXPECT_EQ(
      refusal(edited, kNonce, {kZero, kZero, kZero}),
      "the PCR values in the request do not match the digest the TPM signed (edited request?)");
  TpmQuote patched = recorded();
  patched.attest[40] ^= 1;  // one bit of the nonce inside the signed bytes
  EXPECT_NE(refusal(patched, kNonce, {kZero, kZero, kPcr16}).find("does not verify"),
            std::string::npos);
  TpmQuote other_key = recorded();
  other_key.signature[10] ^= 1;
  EXPECT_NE(refusal(other_key, kNonce, {kZero, kZero, kPcr16}).find("another TPM's key"),
            std::string::npos);
}

TEST(TpmQuote, MalformedQuotesAreFormatErrors) {
  for (std::size_t n : {0u, 4u, 6u, 40u, 100u, static_cast<unsigned>(kAttest.size() - 1)}) {
    const Bytes cut(kAttest.begin(), kAttest.begin() + static_cast<std::ptrdiff_t>(n));
    EXPECT_THROW(parse_quote_info(cut), FormatError) << n;
  }
  Bytes longer = kAttest;
  longer.push_back(0);
  EXPECT_THROW(parse_quote_info(longer), FormatError);
  Bytes huge_size = kAttest;
  huge_size[6] = 0xff;  // qualifiedSigner claims 65k bytes
  EXPECT_THROW(parse_quote_info(huge_size), FormatError);
  TpmQuote rsa = recorded();
  rsa.signature[1] = 0x14;  // RSASSA
  EXPECT_EQ(refusal(rsa, kNonce, {kZero, kZero, kPcr16}),
            "quote signature: algorithm 0x0014/0x000b, only ECDSA with SHA-256 is accepted");
  TpmQuote not_a_key = recorded();
  not_a_key.ak_public.resize(20);
  EXPECT_EQ(refusal(not_a_key, kNonce, {kZero, kZero, kPcr16}),
            "the attestation key is not a DER EC public key");
}

TEST(TpmQuote, PcrListsHaveOneSpelling) {
  EXPECT_EQ(format_pcr_selection(parse_pcr_selection("sha256:0,7,23", "--pcrs")), "sha256:0,7,23");
  for (const char* bad :
       {"", "sha256", "sha256:", "sha1:0", "sha256:24", "sha256:7,0", "sha256:0,0", "sha256:07",
        "sha256: 0", "sha256:0,,1", "sha256:-1", "SHA256:0", "sha256:99999999999999999999"}) {
    EXPECT_THROW(parse_pcr_selection(bad, "--pcrs"), FormatError) << bad;
  }
  try {
    parse_pcr_selection("sha256:24", "--pcrs");
  } catch (const FormatError& e) {
    EXPECT_STREQ(e.what(),
                 "--pcrs: PCRs are canonical decimals 0..23 (expected e.g. 'sha256:0,7,16'), got "
                 "'sha256:24'");
  }
}

TEST(TpmQuote, ARequestCarriesItsQuoteThroughItsTextForm) {
  ActivationRequest r;
  r.license_id = "00112233aabbccdd";
  r.product = "gpulab-serve";
  r.customer = "ACME";
  r.nonce = to_hex(kNonce);
  r.requested = *parse_date("2026-03-01");
  r.hw = {{"machine_id", std::string(64, 'a')}};
  r.quote = recorded();
  const std::string text = format_request(r);
  const ActivationRequest back = parse_request(text);
  ASSERT_TRUE(back.quote);
  EXPECT_EQ(back.quote->attest, kAttest);
  EXPECT_EQ(back.quote->pcr_values, recorded().pcr_values);
  EXPECT_EQ(format_request(back), text);
  // One pcr_value line fewer than quote_pcrs lists: refused before any crypto.
  const auto at = text.find("pcr_value: ");
  std::string missing = text;
  missing.erase(at, text.find('\n', at) + 1 - at);
  EXPECT_THROW(parse_request(missing), FormatError);
}

TEST(TpmQuote, PolicyAndChallengeRoundTrip) {
  AttestPolicy p{"00112233aabbccdd",
                 ak_fingerprint(kAk),
                 parse_pcr_selection("sha256:0,7,16", "t"),
                 {kZero, kZero, kPcr16}};
  const std::string text = format_policy(p);
  EXPECT_EQ(format_policy(parse_policy(text)), text);
  const AttestChallenge c = make_challenge(p, *parse_date("2026-03-01"));
  EXPECT_EQ(format_challenge(parse_challenge(format_challenge(c))), format_challenge(c));
  EXPECT_NE(make_challenge(p, c.issued).nonce, c.nonce);
  std::string short_policy = text.substr(0, text.rfind("pcr_value"));
  EXPECT_THROW(parse_policy(short_policy), FormatError);
}

// testdata/attest/ (the hostile-input samples) came from one swtpm run: the
// request answers the challenge with a quote the policy accepts.
TEST(TpmQuote, TheCheckedInSamplesVerify) {
  const auto load = [](const char* path) { return testing_support::read(path); };
  const AttestPolicy policy = parse_policy(load("testdata/attest/policy.txt"));
  const AttestChallenge challenge = parse_challenge(load("testdata/attest/challenge.txt"));
  ActivationRequest request = parse_request(load("testdata/attest/request.txt"));
  EXPECT_NO_THROW(verify_attested_request(request, policy, "policy.txt", challenge));
  request.quote->pcr_values[2][0] ^= 1;
  EXPECT_THROW(verify_attested_request(request, policy, "policy.txt", challenge),
               gpulab::UsageError);
}

}  // namespace
