// Keyrings, rotation statements and revocation lists as a library: the
// formats are strict, the windows are inclusive, and evaluate() with a
// keyring names the key and the window in its messages.
#include <gtest/gtest.h>

#include "licensing/keyring.hpp"
#include "licensing/license_status.hpp"
#include "licensing/record.hpp"
#include "licensing/revocation.hpp"
#include "test_support.hpp"

namespace {

using namespace licensing;
using testing_support::key;

Date day(const char* s) { return *parse_date(s); }

SignedLicense licence_of(const PrivateKey& k, const char* issued, const char* id = "00000000000000aa") {
  License l;
  l.id = id;
  l.product = "gpulab-serve";
  l.customer = "ACME";
  l.features = {"serve"};
  l.issued = day(issued);
  l.not_before = day("2026-01-01");
  l.expires = day("2026-12-31");
  l.floating = true;
  return parse_license(sign_license(l, k));
}

// Key "old" trusted from 2026-01-01, then rotated to key "new" from 2026-03-01;
// "old" retires after `retire_old` when given.
Keyring rotated(std::optional<Date> retire_old) {
  Keyring ring = Keyring::of(key("old").public_key(), day("2026-01-01"));
  ring.apply(parse_key_rotation(sign_key_rotation(key("old"), key("new").public_key(), day("2026-03-01"), retire_old)));
  return ring;
}

Evaluation at(const SignedLicense& lic, const Keyring& ring, const Revocations* r = nullptr) {
  return evaluate(lic, ring, r, Fingerprint{"gpulab-serve", {}}, start_of(day("2026-06-01")) + 43200, std::nullopt);
}

TEST(Keyring, FormatRoundTripsAndRejectsAMismatchedId) {
  Keyring ring = rotated(day("2026-03-31"));
  const std::string text = ring.format();
  EXPECT_EQ(Keyring::parse(text).format(), text);
  ASSERT_EQ(ring.keys().size(), 2U);
  EXPECT_EQ(ring.keys()[0].window(), "from 2026-01-01 until 2026-03-31");
  EXPECT_EQ(ring.keys()[1].window(), "from 2026-03-01");
  std::string wrong = text;
  wrong[wrong.find("key: ") + 5] = wrong[wrong.find("key: ") + 5] == 'a' ? 'b' : 'a';
  EXPECT_THROW((void)Keyring::parse(wrong), FormatError);
  EXPECT_THROW((void)Keyring::parse("gpulab-keyring: 1\n"), FormatError);  // trusts nothing
}

TEST(Keyring, TheWindowIsInclusiveOnBothEnds) {
  Keyring ring = rotated(day("2026-03-31"));
  EXPECT_EQ(at(licence_of(key("old"), "2026-01-01"), ring).state, LicenseState::kValid);
  EXPECT_EQ(at(licence_of(key("old"), "2026-03-31"), ring).state, LicenseState::kValid);
  const Evaluation late = at(licence_of(key("old"), "2026-04-01"), ring);
  EXPECT_EQ(late.state, LicenseState::kBadSignature);
  EXPECT_NE(late.message.find("trusted only from 2026-01-01 until 2026-03-31 (a retired key)"), std::string::npos);
  EXPECT_EQ(at(licence_of(key("new"), "2026-03-01"), ring).state, LicenseState::kValid);
  EXPECT_EQ(at(licence_of(key("new"), "2026-02-28"), ring).state, LicenseState::kBadSignature);
  EXPECT_NE(at(licence_of(key("other"), "2026-04-01"), ring).message.find("not by any trusted vendor key"),
            std::string::npos);
}

TEST(Keyring, ARotationThatDoesNotVerifyLeavesTheRingAsItWas) {
  Keyring ring = Keyring::of(key("old").public_key());
  const std::string before = ring.format();
  std::string statement = sign_key_rotation(key("old"), key("new").public_key(), day("2026-03-01"), std::nullopt);
  std::string edited = statement;
  edited.replace(edited.find("2026-03-01"), 10, "2026-02-01");
  EXPECT_THROW(ring.apply(parse_key_rotation(edited)), gpulab::UsageError);
  EXPECT_THROW(ring.apply(parse_key_rotation(sign_key_rotation(key("x"), key("new").public_key(), day("2026-03-01"),
                                                               std::nullopt))),
               gpulab::UsageError);
  EXPECT_EQ(ring.format(), before);
  ring.apply(parse_key_rotation(statement));
  EXPECT_THROW(ring.apply(parse_key_rotation(statement)), gpulab::UsageError);  // already trusted
  EXPECT_THROW((void)sign_key_rotation(key("old"), key("new").public_key(), day("2026-03-01"), day("2026-02-01")),
               gpulab::UsageError);  // retiring before the new key starts leaves a gap
}

TEST(Revocations, ARevokedLicenceOrKeyIsRevokedAndTheRestIsNot) {
  Keyring ring = rotated(std::nullopt);
  Revocations r;
  r.serial = 4;
  r.issued = day("2026-05-01");
  r.licences = {"00000000000000bb"};
  r.keys = {key("old").public_key().key_id()};
  const Revocations list = parse_revocations(sign_revocations(r, key("new")));
  verify_revocations(list, ring);
  const Evaluation by_id = at(licence_of(key("new"), "2026-04-01", "00000000000000bb"), ring, &list);
  EXPECT_EQ(by_id.state, LicenseState::kRevoked);
  EXPECT_EQ(state_exit_code(by_id.state), 16);
  EXPECT_EQ(by_id.message, "licence 00000000000000bb is revoked (revocation list 4 of 2026-05-01)");
  EXPECT_EQ(at(licence_of(key("old"), "2026-02-01"), ring, &list).state, LicenseState::kRevoked);
  EXPECT_EQ(at(licence_of(key("new"), "2026-04-01"), ring, &list).state, LicenseState::kValid);
}

TEST(Revocations, AnOldKeyCannotRevokeItsReplacementAndATamperedListFails) {
  Keyring ring = rotated(std::nullopt);
  Revocations r;
  r.serial = 1;
  r.issued = day("2026-05-01");
  r.keys = {key("new").public_key().key_id()};
  EXPECT_THROW(verify_revocations(parse_revocations(sign_revocations(r, key("old"))), ring), gpulab::UsageError);
  r.keys.clear();
  r.licences = {"00000000000000bb"};
  std::string text = sign_revocations(r, key("new"));
  text.replace(text.find("serial: 1"), 9, "serial: 2");
  EXPECT_THROW(verify_revocations(parse_revocations(text), ring), gpulab::UsageError);
  EXPECT_THROW((void)parse_revocations("gpulab-revocations: 1\nserial: 01\n"), FormatError);  // not canonical
}

}  // namespace
