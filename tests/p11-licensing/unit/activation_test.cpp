// The air-gapped activation round trip and the ways it must refuse.
#include <gtest/gtest.h>

#include "licensing/activation.hpp"
#include "licensing/license_status.hpp"
#include "licensing/record.hpp"
#include "test_support.hpp"

using namespace licensing;
using testing_support::key;
using testing_support::machine;
using testing_support::sample_license;

namespace {

class Activation : public ::testing::Test {
 protected:
  Activation() {
    License l = sample_license();
    l.floating = true;
    l.hw.clear();
    l.hw_max_changed = 0;
    entitlement_ = parse_license(sign_license(l, key("vendor")));
  }
  SignedLicense entitlement_;
  Fingerprint here_{"gpulab-serve", machine("a")};
  Date today_ = *parse_date("2026-03-01");
};

TEST_F(Activation, RoundTripThroughFilesProducesABoundValidLicence) {
  const std::string req_text = format_request(make_request(entitlement_, here_, today_));
  const ActivationRequest req = parse_request(req_text);  // what the vendor reads from the USB stick
  const std::string act = sign_activation(req, entitlement_, key("vendor"), today_, 2);
  const SignedLicense lic = accept_activation(act, req, key("vendor").public_key(), here_);
  EXPECT_FALSE(lic.license.floating);
  EXPECT_EQ(lic.license.hw, here_.components);
  EXPECT_EQ(lic.license.activation_nonce, req.nonce);
  EXPECT_EQ(lic.license.max_gpus, 8u);
  const Evaluation e = evaluate(lic, key("vendor").public_key(), here_,
                                start_of(today_) + 3600, std::nullopt);
  EXPECT_EQ(e.state, LicenseState::kValid);
  // Bound now: useless on another machine.
  EXPECT_EQ(evaluate(lic, key("vendor").public_key(), {"gpulab-serve", machine("b")}, start_of(today_), std::nullopt).state,
            LicenseState::kHwMismatch);
}

TEST_F(Activation, NoncesAreFreshAndReplaysAreRefused) {
  const ActivationRequest first = make_request(entitlement_, here_, today_);
  const ActivationRequest second = make_request(entitlement_, here_, today_);
  EXPECT_NE(first.nonce, second.nonce);
  const std::string act = sign_activation(first, entitlement_, key("vendor"), today_, 2);
  EXPECT_THROW(accept_activation(act, second, key("vendor").public_key(), here_), gpulab::UsageError);
}

TEST_F(Activation, RefusesForeignKeysOtherMachinesAndDamagedRequests) {
  const ActivationRequest req = make_request(entitlement_, here_, today_);
  // The vendor only answers for its own entitlements.
  const SignedLicense foreign = parse_license(sign_license(entitlement_.license, key("other")));
  EXPECT_THROW(sign_activation(req, foreign, key("vendor"), today_, 2), gpulab::UsageError);
  // The customer only installs the trusted vendor's answer...
  const std::string forged = sign_activation(req, foreign, key("other"), today_, 2);
  EXPECT_THROW(accept_activation(forged, req, key("vendor").public_key(), here_), gpulab::UsageError);
  // ...and only on the machine that asked.
  const std::string act = sign_activation(req, entitlement_, key("vendor"), today_, 2);
  EXPECT_THROW(accept_activation(act, req, key("vendor").public_key(), {"gpulab-serve", machine("b")}),
               gpulab::UsageError);
  // A request damaged in transfer is caught by its digest or its format.
  std::string text = format_request(req);
  const auto at = text.find("nonce: ") + 7;
  text[at] = text[at] == 'a' ? 'b' : 'a';
  EXPECT_THROW(parse_request(text), FormatError);
  EXPECT_THROW(parse_request(format_request(req).substr(0, 200)), FormatError);
  // Tolerance too loose for the request's components.
  EXPECT_THROW(sign_activation(req, entitlement_, key("vendor"), today_, 4), gpulab::UsageError);
}

}  // namespace
