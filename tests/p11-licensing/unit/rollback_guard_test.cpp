#include <gtest/gtest.h>

#include "licensing/license_gate.hpp"
#include "licensing/rollback_guard.hpp"
#include "licensing/secure_file.hpp"
#include "test_support.hpp"

using namespace licensing;
using testing_support::key;
using testing_support::noon;
using testing_support::sample_license;
using testing_support::TempDir;

namespace {

TEST(RollbackGuard, ClockBehindLastSeenIsReported) {
  TempDir dir;
  const SignedLicense lic = parse_license(sign_license(sample_license(), key("vendor")));
  const RollbackGuard guard(dir / "state", 3600);
  EXPECT_FALSE(guard.check(lic, noon("2026-06-01")));  // first use
  guard.record(lic, noon("2026-06-01"));
  EXPECT_EQ(testing_support::mode_of(dir / "state"), 0600u);
  EXPECT_EQ(guard.last_seen(lic), noon("2026-06-01"));
  EXPECT_FALSE(guard.check(lic, noon("2026-06-01") - 3600));      // an NTP step within tolerance
  const auto problem = guard.check(lic, noon("2026-06-01") - 3601);
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("behind the last time"), std::string::npos);
  guard.record(lic, noon("2026-05-01"));  // recording never moves last_seen backwards
  EXPECT_EQ(guard.last_seen(lic), noon("2026-06-01"));
}

TEST(RollbackGuard, EditedStateFileIsReported) {
  TempDir dir;
  const SignedLicense lic = parse_license(sign_license(sample_license(), key("vendor")));
  const RollbackGuard guard(dir / "state");
  guard.record(lic, noon("2026-06-01"));
  std::string text = testing_support::read(dir / "state");
  const std::string seen = std::to_string(noon("2026-06-01"));
  text.replace(text.find(seen), seen.size(), std::to_string(noon("2026-03-01")));
  testing_support::write(dir / "state", text);
  const auto problem = guard.check(lic, noon("2026-04-01"));
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("integrity check"), std::string::npos);
  // A state record that no longer parses is tampering too.
  testing_support::write(dir / "state", "gpulab-license-state: 1\ngarbage");
  EXPECT_TRUE(guard.check(lic, noon("2026-04-01")));
}

// Before: a directory, an empty file or some other file given as the state
// file all read as "fails its integrity check (edited?)": CLOCK_ROLLBACK, a
// tampering verdict for a typo. Now each is an input error naming the file.
TEST(RollbackGuard, APathThatIsNoStateRecordIsAnErrorNotTampering) {
  TempDir dir;
  const SignedLicense lic = parse_license(sign_license(sample_license(), key("vendor")));
  const auto message = [&](const std::filesystem::path& p) -> std::string {
    try {
      (void)RollbackGuard(p).check(lic, noon("2026-04-01"));
    } catch (const gpulab::UsageError& e) {
      return e.what();
    }
    return "(no error)";
  };
  std::filesystem::create_directory(dir / "dir");
  EXPECT_EQ(message(dir / "dir"), "last-seen state: '" + (dir / "dir").string() + "' is a directory, not a file");
  testing_support::write(dir / "empty", "");
  EXPECT_EQ(message(dir / "empty"), "last-seen state: '" + (dir / "empty").string() +
                                        "' is empty, not a state record (delete it to start a new one)");
  testing_support::write(dir / "a.lic", sign_license(sample_license(), key("vendor")));
  EXPECT_EQ(message(dir / "a.lic"), "last-seen state: '" + (dir / "a.lic").string() +
                                        "' is not a state record (those start with 'gpulab-license-state:')");
  EXPECT_THROW(RollbackGuard(dir / "dir").record(lic, noon("2026-04-01")), gpulab::UsageError);
  // A missing file is a first use, and a character device keeps no record: both fine.
  EXPECT_FALSE(RollbackGuard(dir / "missing").check(lic, noon("2026-04-01")));
  EXPECT_FALSE(RollbackGuard("/dev/null").check(lic, noon("2026-04-01")));
  EXPECT_FALSE(RollbackGuard("/dev/null").last_seen(lic));
}

TEST(RollbackGuard, ANewLicenceStartsFresh) {
  TempDir dir;
  const SignedLicense a = parse_license(sign_license(sample_license(), key("vendor")));
  License other = sample_license();
  other.id = "ffeeddccbbaa9988";
  const SignedLicense b = parse_license(sign_license(other, key("vendor")));
  const RollbackGuard guard(dir / "state");
  guard.record(a, noon("2026-06-01"));
  EXPECT_FALSE(guard.check(b, noon("2026-02-01")));
}

TEST(LicenseGate, AnswersFeatureAndGpuQuestionsOnlyWhileUsable) {
  TempDir dir;
  write_file_atomic(dir / "l.lic", sign_license(sample_license(), key("vendor")), kPublicMode);
  write_file_atomic(dir / "v.pub", key("vendor").public_key().pem(), kPublicMode);
  std::int64_t now = noon("2026-06-01");
  GateOptions o;
  o.license_file = dir / "l.lic";
  o.public_key_file = dir / "v.pub";
  o.clock = [&] { return now; };
  o.fingerprint = [](std::string_view p) { return Fingerprint{std::string(p), testing_support::machine("a")}; };
  const LicenseGate ok(o);
  EXPECT_TRUE(ok.has_feature("kv-offload"));
  EXPECT_FALSE(ok.has_feature("training"));
  EXPECT_EQ(ok.max_gpus(), 8u);
  EXPECT_TRUE(std::filesystem::exists(dir / "l.lic.state"));

  now = noon("2027-02-01");
  const LicenseGate expired(o);
  EXPECT_EQ(expired.check().evaluation.state, LicenseState::kExpired);
  EXPECT_FALSE(expired.has_feature("kv-offload"));
  EXPECT_EQ(expired.max_gpus(), 0u);

  now = noon("2026-06-02");  // after 2027-02-01 was seen
  const LicenseGate rolled(o);
  EXPECT_EQ(rolled.check().evaluation.state, LicenseState::kClockRollback);
  EXPECT_FALSE(rolled.allows_use());
}

TEST(SecureFile, KeysAreWrittenPrivateAndNeverClobbered) {
  TempDir dir;
  const auto old = ::umask(0);  // even with a permissive umask
  write_file_atomic(dir / "k.key", "secret", kSecretMode, Overwrite::kNo);
  ::umask(old);
  EXPECT_EQ(testing_support::mode_of(dir / "k.key"), 0600u);
  EXPECT_THROW(write_file_atomic(dir / "k.key", "other", kSecretMode, Overwrite::kNo), gpulab::UsageError);
  EXPECT_EQ(testing_support::read(dir / "k.key"), "secret");
  // No temporary files left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);
}

TEST(SecureFile, ReadLimitIsEnforced) {
  TempDir dir;
  testing_support::write(dir / "big", std::string(5000, 'x'));
  EXPECT_THROW(read_file_limited(dir / "big", 4096), gpulab::UsageError);
  EXPECT_THROW(read_file_limited(dir / "missing", 4096), gpulab::UsageError);
  EXPECT_THROW(read_file_limited(dir.path(), 4096), gpulab::UsageError);  // a directory
  EXPECT_THROW(read_file_limited("/dev/zero", 4096), gpulab::UsageError);  // a device
  // The shared reader (gpulab::read_input_file): a FIFO nobody writes to reads as empty, no hang.
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(read_file_limited(dir / "fifo", 4096), "");
}

}  // namespace
