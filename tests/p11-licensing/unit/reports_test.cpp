// licensectl's reports without the program: what each command prints, in
// text and JSON, from result structs built here.
#include "licensing/reports.hpp"

#include <gtest/gtest.h>

#include <string>

#include "gpulab/errors.hpp"

namespace licensing {
namespace {

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

License sample_license() {
  License l;
  l.id = "0123456789abcdef";
  l.product = "gpulab-serve";
  l.customer = "ACME";
  l.features = {"a", "b"};
  l.max_gpus = 4;
  l.issued = l.not_before = *parse_date("2026-01-01");
  l.expires = *parse_date("2027-01-01");
  l.grace_days = 14;
  l.floating = true;
  l.key_id = "9cc385b1fea158ad";
  return l;
}

TEST(Reports, FlagHelpers) {
  EXPECT_EQ(features_arg("b,a,b"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(format_date(date_arg("2026-02-03", "--today")), "2026-02-03");
  EXPECT_THROW(date_arg("2026-13-01", "--expires"), gpulab::UsageError);
  EXPECT_EQ(clock_arg("@42")(), 42);
  EXPECT_EQ(clock_arg("1970-01-02")(), kSecondsPerDay + kSecondsPerDay / 2);
  EXPECT_THROW(clock_arg("@-1"), gpulab::UsageError);
  EXPECT_EQ(tolerance_for(9, -1), 2U);
  EXPECT_EQ(tolerance_for(9, 1), 1U);
  EXPECT_THROW(tolerance_for(4, 3), gpulab::UsageError);
}

TEST(Reports, StatusTableAndJsonAgree) {
  StatusReport r{"a.lic", {}};
  r.check.license.license = sample_license();
  r.check.evaluation.state = LicenseState::kGrace;
  r.check.evaluation.message = "expired 2027-01-01; 3 grace days left";
  r.check.evaluation.days_left = 3;
  r.check.now = 1800000000;
  const std::string text = render(r);
  EXPECT_TRUE(has(text, "features   a,b\n")) << text;
  EXPECT_TRUE(has(text, "valid      2026-01-01 .. 2027-01-01 (+14 grace days)\n")) << text;
  EXPECT_TRUE(has(text, "binding    floating (any machine)\n")) << text;
  EXPECT_TRUE(has(text, "GRACE: expired 2027-01-01; 3 grace days left\n")) << text;
  EXPECT_EQ(r.exit_code(), 10);
  const gpulab::Json j = to_json(r);
  EXPECT_EQ(j["state"], "GRACE");
  EXPECT_EQ(j["exit_code"], 10);
  EXPECT_EQ(j["binding"], "floating");
  EXPECT_EQ(j["expires"], "2027-01-01");
  EXPECT_FALSE(j.contains("hw"));
}

TEST(Reports, OneLineReports) {
  IssueReport issue{"x.lic", sample_license(), "9cc385b1fea158ad"};
  EXPECT_EQ(render(issue),
            "wrote x.lic: licence 0123456789abcdef for 'ACME', 4 GPUs, 2026-01-01 .. 2027-01-01 "
            "(+14 grace days), floating\n");
  issue.license.floating = false;
  issue.license.hw.resize(9);
  issue.license.hw_max_changed = 2;
  EXPECT_TRUE(has(render(issue), "bound to 9 components (k=2)\n"));
  EXPECT_EQ(to_json(issue)["id"], "0123456789abcdef");

  EXPECT_EQ(render(KeygenReport{"v", "abcd"}),
            "wrote v.key (mode 0600, keep offline) and v.pub; key id abcd\n");
  RequestReport req{"r.txt", {}};
  req.request.license_id = "0123456789abcdef";
  req.request.nonce = "00112233445566778899";
  req.request.hw.resize(3);
  EXPECT_EQ(render_sign_activation(req),
            "wrote r.txt: licence 0123456789abcdef bound to the 3 components of the request "
            "(nonce 00112233...)\n");
  EXPECT_TRUE(has(render_activate_request(req), "(3 components); carry it to the vendor\n"));
  EXPECT_EQ(activate_request_json(req)["request"], "r.txt");
  EXPECT_EQ(sign_activation_json(req)["activation"], "r.txt");
}

TEST(Reports, DemoCountsFailures) {
  DemoReport r;
  r.rows = {{"valid", "2026-06-01", "VALID", "VALID", 0, "ok"},
            {"tampered", "2026-06-01", "BAD_SIGNATURE", "VALID", 0, "oops"}};
  EXPECT_EQ(r.failed(), 1U);
  const std::string text = render(r);
  EXPECT_TRUE(has(text, "1 of 2 scenarios behaved as expected\n")) << text;
  EXPECT_TRUE(has(text, "FAIL")) << text;
  EXPECT_EQ(to_json(r)["failed"], 1);
  EXPECT_EQ(to_json(r)["scenarios"][1]["pass"], false);
}

}  // namespace
}  // namespace licensing
