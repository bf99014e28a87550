// licensectl status --metrics-out: the licence's state, expiry and days left
// as Prometheus text that promtool accepts, rewritten on every state, also
// when the licence cannot be read.
#include <gtest/gtest.h>

#include "licensectl_run.hpp"
#include "swtpm_process.hpp"
#include "test_support.hpp"

using testing_support::read;
using testing_support::TempDir;
using namespace testing_support::licensectl_run;

namespace {

class LicenceMetrics : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(run(dir_, "licensectl keygen --out vendor").code, 0);
    ASSERT_EQ(run(dir_,
                  "licensectl issue --key vendor.key --customer ACME --features serve --floating "
                  "--max-gpus 8 "
                  "--issued 2026-01-01 --expires 2026-12-31 --grace-days 14 --out a.lic")
                  .code,
              0);
  }
  Outcome status(const std::string& now, const std::string& lic = "a.lic") {
    return run(dir_, "licensectl status " + lic + " --public-key vendor.pub --now " + now +
                         " --metrics-out a.prom");
  }
  std::string metric(const std::string& series) {
    const std::string text = read(dir_ / "a.prom");
    const auto at = text.find("\n" + series + " ");
    if (at == std::string::npos) return "absent";
    const auto start = at + series.size() + 2;
    return text.substr(start, text.find('\n', start) - start);
  }
  TempDir dir_;
};

TEST_F(LicenceMetrics, ValidWritesStateExpiryAndDaysLeft) {
  ASSERT_EQ(status("2026-12-20").code, 0);
  EXPECT_EQ(metric("gpulab_license_state{license_file=\"a.lic\",state=\"VALID\"}"), "1");
  EXPECT_EQ(metric("gpulab_license_state{license_file=\"a.lic\",state=\"GRACE\"}"), "0");
  EXPECT_EQ(metric("gpulab_license_state{license_file=\"a.lic\",state=\"UNREADABLE\"}"), "0");
  // From noon on 2026-12-20: 11.5 days to the end of 2026-12-31; all 14 grace days ahead.
  EXPECT_EQ(metric("gpulab_license_validity_remaining_seconds{license_file=\"a.lic\"}"), "993600");
  EXPECT_EQ(metric("gpulab_license_grace_remaining_seconds{license_file=\"a.lic\"}"), "1209600");
  // 2027-01-01T00:00:00Z, the end of the last valid day; grace ends 14 days later.
  EXPECT_EQ(metric("gpulab_license_expiry_timestamp_seconds{license_file=\"a.lic\"}"),
            "1798761600");
  EXPECT_EQ(metric("gpulab_license_grace_end_timestamp_seconds{license_file=\"a.lic\"}"),
            "1799971200");
  EXPECT_EQ(metric("gpulab_license_max_gpus{license_file=\"a.lic\"}"), "8");
}

TEST_F(LicenceMetrics, GraceAndExpiredMoveTheOneAndTheCountdowns) {
  ASSERT_EQ(status("2027-01-10").code, 10);
  EXPECT_EQ(metric("gpulab_license_state{license_file=\"a.lic\",state=\"VALID\"}"), "0");
  EXPECT_EQ(metric("gpulab_license_state{license_file=\"a.lic\",state=\"GRACE\"}"), "1");
  EXPECT_EQ(metric("gpulab_license_validity_remaining_seconds{license_file=\"a.lic\"}"), "0");
  // Noon on 2027-01-10 to the end of 2027-01-14: 4.5 days.
  EXPECT_EQ(metric("gpulab_license_grace_remaining_seconds{license_file=\"a.lic\"}"), "388800");
  ASSERT_EQ(status("2027-02-01").code, 11);
  EXPECT_EQ(metric("gpulab_license_state{license_file=\"a.lic\",state=\"GRACE\"}"), "0");
  EXPECT_EQ(metric("gpulab_license_state{license_file=\"a.lic\",state=\"EXPIRED\"}"), "1");
  EXPECT_EQ(metric("gpulab_license_grace_remaining_seconds{license_file=\"a.lic\"}"), "0");
  EXPECT_EQ(metric("gpulab_license_max_gpus{license_file=\"a.lic\"}"), "0");
}

TEST_F(LicenceMetrics, AnUnreadableLicenceIsAStateNotAStaleFile) {
  ASSERT_EQ(status("2026-12-20").code, 0);
  testing_support::write(dir_ / "broken.lic", "gpulab-license: 1\n");
  const Outcome r = status("2026-12-21", "broken.lic");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("licensectl: error: ", 0), 0u) << r.err;
  EXPECT_EQ(metric("gpulab_license_state{license_file=\"broken.lic\",state=\"UNREADABLE\"}"), "1");
  EXPECT_EQ(metric("gpulab_license_state{license_file=\"broken.lic\",state=\"VALID\"}"), "0");
  EXPECT_EQ(metric("gpulab_license_expiry_timestamp_seconds{license_file=\"broken.lic\"}"),
            "absent");
}

TEST_F(LicenceMetrics, PromtoolAcceptsTheFile) {
  if (!testing_support::on_path("promtool"))
    GTEST_SKIP() << "promtool not installed (apt-get install prometheus)";
  ASSERT_EQ(status("2026-12-20").code, 0);
  // Through a pipe: shell() redirects stdin from /dev/null after the command.
  const Outcome r = shell(dir_, "cat a.prom | promtool check metrics");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.out + r.err, "");
}

TEST_F(LicenceMetrics, AnUnwritableFileIsOneErrorLine) {
  const Outcome r =
      run(dir_, "licensectl status a.lic --public-key vendor.pub --now 2026-12-20 --metrics-out .");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("licensectl: error: --metrics-out: ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

}  // namespace
