// The licence text: one canonical form, and every malformed variant refused with a reason.
#include <gtest/gtest.h>

#include "licensing/license.hpp"
#include "licensing/record.hpp"
#include "test_support.hpp"

using namespace licensing;
using testing_support::key;
using testing_support::sample_license;

namespace {

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto p = s.find(from);
  EXPECT_NE(p, std::string::npos) << from;
  if (p != std::string::npos) s.replace(p, from.size(), to);
  return s;
}

std::string reason(const std::string& text) {
  try {
    parse_license(text);
  } catch (const FormatError& e) {
    return e.what();
  }
  return "";
}

TEST(LicenseFormat, PayloadIsCanonicalAndDeterministic) {
  const License l = sample_license();
  const std::string a = sign_license(l, key("vendor"));
  EXPECT_EQ(a, sign_license(l, key("vendor")));  // Ed25519 is deterministic, the payload too
  // Field order is fixed by the format, features are written sorted.
  EXPECT_EQ(a.rfind("gpulab-license: 1\nid: 00112233aabbccdd\nproduct: gpulab-serve\n", 0), 0u);
  EXPECT_NE(a.find("\nfeatures: batching,kv-offload\nmax_gpus: 8\nissued: 2025-12-15\nnot_before: 2026-01-01\n"
                   "expires: 2026-12-31\ngrace_days: 14\nbinding: hardware\nhw_max_changed: 2\nhw: "),
            std::string::npos);
  const SignedLicense s = parse_license(a);
  EXPECT_EQ(s.license.features, l.features);
  EXPECT_EQ(s.license.hw, l.hw);
  EXPECT_EQ(s.license.key_id, key("vendor").public_key().key_id());
  EXPECT_EQ(s.payload + "signature: " + to_base64(s.signature) + "\n", a);
}

TEST(LicenseFormat, RejectsEveryTruncation) {
  const std::string text = sign_license(sample_license(), key("vendor"));
  for (std::size_t n = 0; n < text.size(); ++n) {
    EXPECT_THROW(parse_license(text.substr(0, n)), FormatError) << "prefix of " << n << " bytes";
  }
}

TEST(LicenseFormat, RejectsReEncodings) {
  const std::string text = sign_license(sample_license(), key("vendor"));
  EXPECT_NE(reason(replace(text, "max_gpus: 8", "max_gpus: 08")).find("canonical decimal"), std::string::npos);
  EXPECT_NE(reason(replace(text, "batching,kv-offload", "kv-offload,batching")).find("sorted"), std::string::npos);
  EXPECT_NE(reason(replace(text, "\n", "\r\n")).find("CR line ending"), std::string::npos);
  EXPECT_NE(reason("\xEF\xBB\xBF" + text).find("byte-order mark"), std::string::npos);
  EXPECT_NE(reason(replace(text, "grace_days: 14", "grace_days:  14")).find("blanks"), std::string::npos);
  EXPECT_NE(reason(replace(text, "customer: Example", "Customer: Example")).find("outside [a-z0-9_-]"),
            std::string::npos);
  EXPECT_NE(reason(replace(text, "2026-12-31", "2026-12-31T00:00Z")).find("YYYY-MM-DD"), std::string::npos);
  EXPECT_NE(reason(replace(text, "2026-12-31", "2026-02-30")).find("YYYY-MM-DD"), std::string::npos);
  // Base64 with non-zero padding bits decodes to the same bytes but is a second spelling.
  const auto sig_at = text.find("signature: ");
  std::string sig = text.substr(sig_at + 11, 88);
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  sig[85] = alphabet[alphabet.find(sig[85]) ^ 1u];  // flips a padding bit only
  EXPECT_NE(reason(text.substr(0, sig_at + 11) + sig + "\n").find("canonical base64"), std::string::npos);
}

TEST(LicenseFormat, RejectsSwappedDuplicatedAndUnknownFields) {
  const std::string text = sign_license(sample_license(), key("vendor"));
  EXPECT_NE(reason(replace(text, "not_before: 2026-01-01\nexpires: 2026-12-31\n",
                           "expires: 2026-12-31\nnot_before: 2026-01-01\n"))
                .find("expected field 'not_before', found 'expires'"),
            std::string::npos);
  EXPECT_NE(reason(replace(text, "max_gpus: 8\n", "max_gpus: 8\nmax_gpus: 64\n")).find("found 'max_gpus'"),
            std::string::npos);
  EXPECT_NE(reason(replace(text, "key_id:", "comment: hi\nkey_id:")).find("found 'comment'"), std::string::npos);
  EXPECT_NE(reason(text + "extra: 1\n").find("after the end of the licence"), std::string::npos);
  EXPECT_NE(reason(replace(text, "gpulab-license: 1", "gpulab-license: 2")).find("unsupported"), std::string::npos);
}

TEST(LicenseFormat, RejectsInvalidUtf8AndHugeInput) {
  const std::string text = sign_license(sample_license(), key("vendor"));
  EXPECT_NE(reason(replace(text, "Example", "Ex\xff" "ample")).find("UTF-8"), std::string::npos);
  EXPECT_NE(reason(std::string(kMaxLicenseBytes + 1, 'a')).find("larger"), std::string::npos);
  EXPECT_NE(reason(replace(text, "Example", std::string(5000, 'x'))).find("longer than"), std::string::npos);
  EXPECT_NE(reason(std::string("\0\0\0\n", 4)).find("control"), std::string::npos);
}

TEST(LicenseFormat, ValidateRefusesNonsenseTerms) {
  License l = sample_license();
  l.expires = *parse_date("2025-01-01");
  EXPECT_THROW(sign_license(l, key("vendor")), FormatError);
  l = sample_license();
  l.hw_max_changed = 4;  // 4 of 7 may change: a minority would bind
  EXPECT_THROW(sign_license(l, key("vendor")), FormatError);
  l = sample_license();
  l.customer = "bad\tname";
  EXPECT_THROW(sign_license(l, key("vendor")), FormatError);
  l = sample_license();
  l.max_gpus = 0;
  EXPECT_THROW(sign_license(l, key("vendor")), FormatError);
}

TEST(LicenseFormat, SignatureChecksNameTheProblem) {
  const std::string text = sign_license(sample_license(), key("vendor"));
  const PublicKey vendor = key("vendor").public_key();
  EXPECT_EQ(check_signature(parse_license(text), vendor), SignatureCheck::kValid);
  EXPECT_EQ(check_signature(parse_license(replace(text, "max_gpus: 8", "max_gpus: 9")), vendor),
            SignatureCheck::kInvalid);
  // Same contents, signed by another key.
  EXPECT_EQ(check_signature(parse_license(sign_license(sample_license(), key("other"))), vendor),
            SignatureCheck::kWrongKey);
  // Another key's signature with our key_id copied in: still just invalid.
  std::string forged = sign_license(sample_license(), key("other"));
  forged = replace(forged, key("other").public_key().key_id(), vendor.key_id());
  EXPECT_EQ(check_signature(parse_license(forged), vendor), SignatureCheck::kInvalid);
}

}  // namespace
