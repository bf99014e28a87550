// Each licence state at its boundary, with an injected clock (no sleeping).
#include <gtest/gtest.h>

#include <set>

#include "licensing/license_status.hpp"
#include "test_support.hpp"

using namespace licensing;
using testing_support::key;
using testing_support::machine;
using testing_support::noon;
using testing_support::sample_license;

namespace {

class Status : public ::testing::Test {
 protected:
  Evaluation at(const char* date, const std::vector<HwComponent>& hw = machine("a"),
                const std::optional<std::string>& rollback = std::nullopt) {
    return evaluate(lic_, vendor_, Fingerprint{"gpulab-serve", hw}, noon(date), rollback);
  }
  SignedLicense lic_ = parse_license(sign_license(sample_license(), key("vendor")));
  PublicKey vendor_ = key("vendor").public_key();
};

TEST_F(Status, NotYetValidUntilTheFirstDay) {
  const Evaluation e = at("2025-12-31");
  EXPECT_EQ(e.state, LicenseState::kNotYetValid);
  EXPECT_EQ(e.days_left, 1);
  EXPECT_EQ(at("2026-01-01").state, LicenseState::kValid);
}

TEST_F(Status, ValidThroughTheWholeExpiryDay) {
  const Evaluation first_second = evaluate(lic_, vendor_, {"gpulab-serve", machine("a")},
                                           start_of(*parse_date("2026-12-31")), std::nullopt);
  EXPECT_EQ(first_second.state, LicenseState::kValid);
  const Evaluation last_second = evaluate(lic_, vendor_, {"gpulab-serve", machine("a")},
                                          start_of(*parse_date("2027-01-01")) - 1, std::nullopt);
  EXPECT_EQ(last_second.state, LicenseState::kValid);
  EXPECT_EQ(last_second.days_left, 1);
  EXPECT_NE(last_second.message.find("1 day left"), std::string::npos);
}

TEST_F(Status, GraceFromTheDayAfterExpiryToTheLastGraceDay) {
  const Evaluation first = at("2027-01-01");
  EXPECT_EQ(first.state, LicenseState::kGrace);
  EXPECT_EQ(first.days_left, 14);
  const Evaluation last = at("2027-01-14");
  EXPECT_EQ(last.state, LicenseState::kGrace);
  EXPECT_EQ(last.days_left, 1);
  EXPECT_NE(last.message.find("grace period ends 2027-01-14"), std::string::npos);
  EXPECT_EQ(at("2027-01-15").state, LicenseState::kExpired);
}

TEST_F(Status, ZeroGraceDaysExpiresTheNextDay) {
  License l = sample_license();
  l.grace_days = 0;
  lic_ = parse_license(sign_license(l, key("vendor")));
  EXPECT_EQ(at("2026-12-31").state, LicenseState::kValid);
  EXPECT_EQ(at("2027-01-01").state, LicenseState::kExpired);
}

TEST_F(Status, FuzzyHardwareMatch) {
  auto hw = machine("a");
  hw[0] = testing_support::comp("nic_mac", "replacement card");  // one component gone, one new
  EXPECT_EQ(at("2026-06-01", hw).state, LicenseState::kValid);
  auto two = machine("a");
  two.erase(two.begin(), two.begin() + 2);
  EXPECT_EQ(at("2026-06-01", two).state, LicenseState::kValid);  // k = 2
  auto three = machine("a");
  three.erase(three.begin(), three.begin() + 3);
  const Evaluation e = at("2026-06-01", three);
  EXPECT_EQ(e.state, LicenseState::kHwMismatch);
  EXPECT_NE(e.message.find("3 of 7 components changed"), std::string::npos);
  EXPECT_EQ(at("2026-06-01", machine("b")).state, LicenseState::kHwMismatch);
}

TEST_F(Status, FloatingLicenceIgnoresHardware) {
  License l = sample_license();
  l.floating = true;
  l.hw.clear();
  l.hw_max_changed = 0;
  lic_ = parse_license(sign_license(l, key("vendor")));
  EXPECT_EQ(at("2026-06-01", machine("b")).state, LicenseState::kValid);
}

TEST_F(Status, SignatureIsCheckedBeforeAnythingElse) {
  lic_ = parse_license(sign_license(sample_license(), key("attacker")));
  const Evaluation e = at("2026-06-01", machine("b"), std::string("rolled back"));
  EXPECT_EQ(e.state, LicenseState::kBadSignature);
  EXPECT_NE(e.message.find("not by the trusted vendor key"), std::string::npos);
}

TEST_F(Status, RollbackBeatsTimeAndHardware) {
  EXPECT_EQ(at("2026-06-01", machine("b"), std::string("clock behind")).state, LicenseState::kClockRollback);
  // A date before the licence was even issued is a rollback without any state file.
  const Evaluation e = at("2025-12-14");
  EXPECT_EQ(e.state, LicenseState::kClockRollback);
  EXPECT_NE(e.message.find("before the licence was issued"), std::string::npos);
}

TEST(StateCodes, AreDistinctAndAvoidTheConventionCodes) {
  std::set<int> codes;
  for (auto s : {LicenseState::kValid, LicenseState::kGrace, LicenseState::kExpired, LicenseState::kNotYetValid,
                 LicenseState::kBadSignature, LicenseState::kHwMismatch, LicenseState::kClockRollback}) {
    const int c = state_exit_code(s);
    EXPECT_TRUE(codes.insert(c).second) << state_name(s);
    if (s != LicenseState::kValid) {
      EXPECT_TRUE(c != 0 && c != 1 && c != 2 && c != 77) << state_name(s);
    }
  }
}

}  // namespace
