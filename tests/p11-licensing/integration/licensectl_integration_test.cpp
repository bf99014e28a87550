// The programs as a user runs them: exit codes, one-line errors, files.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <ctime>

#include <nlohmann/json.hpp>

#include "licensectl_run.hpp"
#include "test_support.hpp"

using testing_support::read;
using testing_support::TempDir;
using testing_support::write;
using namespace testing_support::licensectl_run;

namespace {

class Licensectl : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_host(dir_ / "host-a", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    fake_host(dir_ / "host-b", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
    ASSERT_EQ(run(dir_, "licensectl keygen --out vendor").code, 0);
    ASSERT_EQ(run(dir_, "hwfp --root host-a --out a.fp").code, 0);
    const Outcome issue = run(dir_, "licensectl issue --key vendor.key --customer 'ACME' --features serve --max-gpus 4 "
                                "--issued 2026-01-01 --not-before 2026-01-01 --expires 2026-06-30 --grace-days 5 "
                                "--fingerprint a.fp --out a.lic");
    ASSERT_EQ(issue.code, 0) << issue.err;
  }
  Outcome status(const std::string& now, const std::string& extra = "--root host-a") {
    return run(dir_, "licensectl status a.lic --public-key vendor.pub --now " + now + " " + extra);
  }
  TempDir dir_;
};

TEST_F(Licensectl, KeygenWritesAPrivateKeyAndNeverOverwritesIt) {
  EXPECT_EQ(testing_support::mode_of(dir_ / "vendor.key"), 0600u);
  EXPECT_EQ(testing_support::mode_of(dir_ / "vendor.pub"), 0644u);
  const std::string before = read(dir_ / "vendor.key");
  const Outcome again = run(dir_, "licensectl keygen --out vendor");
  EXPECT_EQ(again.code, 2);
  EXPECT_EQ(again.err.rfind("licensectl: error: ", 0), 0u);
  EXPECT_EQ(read(dir_ / "vendor.key"), before);
}

TEST_F(Licensectl, StatusExitCodesFollowTheState) {
  EXPECT_EQ(status("2025-12-31").code, 15);  // before the issue date: the clock is wrong
  EXPECT_EQ(status("2026-01-01").code, 0);
  EXPECT_EQ(status("2026-06-30").code, 0);
  const Outcome grace = status("2026-07-05");
  EXPECT_EQ(grace.code, 10);
  EXPECT_NE(grace.out.find("GRACE: expired 2026-06-30; grace period ends 2026-07-05 (1 day left)"), std::string::npos);
  EXPECT_EQ(status("2026-07-06").code, 11);
  EXPECT_EQ(status("2026-06-01").code, 15);  // clock set back after 2026-07-06 was seen
  EXPECT_NE(status("2026-06-01").out.find("CLOCK_ROLLBACK"), std::string::npos);
  EXPECT_EQ(status("2026-07-07", "--root host-b").code, 14);
}

TEST_F(Licensectl, NotYetValidAndBadSignatureAndJson) {
  ASSERT_EQ(run(dir_, "licensectl issue --key vendor.key --customer ACME --features serve --issued 2026-01-01 "
                      "--not-before 2026-02-01 --expires 2026-03-01 --floating --out f.lic").code, 0);
  EXPECT_EQ(run(dir_, "licensectl status f.lic --public-key vendor.pub --now 2026-01-15").code, 12);
  std::string text = read(dir_ / "f.lic");
  text.replace(text.find("customer: ACME"), 14, "customer: ACMF");
  write(dir_ / "f.lic", text);
  const Outcome bad = run(dir_, "licensectl --json status f.lic --public-key vendor.pub --now 2026-02-15");
  EXPECT_EQ(bad.code, 13);
  const auto j = nlohmann::json::parse(bad.out);
  EXPECT_EQ(j["state"], "BAD_SIGNATURE");
  EXPECT_EQ(j["exit_code"], 13);
}

TEST_F(Licensectl, MalformedInputIsOneLineAndExitTwo) {
  const std::string text = read(dir_ / "a.lic");
  write(dir_ / "trunc.lic", text.substr(0, text.size() / 3));
  write(dir_ / "huge.lic", std::string(10 << 20, 'a'));
  write(dir_ / "utf.lic", "gpulab-license: 1\nid: \xff\xfe\n");
  for (const char* f : {"trunc.lic", "huge.lic", "utf.lic", "missing.lic"}) {
    const Outcome r = run(dir_, std::string("licensectl status ") + f + " --public-key vendor.pub --now 2026-03-01");
    EXPECT_EQ(r.code, 2) << f;
    EXPECT_EQ(r.err.rfind("licensectl: error: ", 0), 0u) << f << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << f;
  }
  EXPECT_EQ(run(dir_, "licensectl status a.lic --public-key a.lic").code, 2);  // not a key
  EXPECT_EQ(run(dir_, "licensectl status a.lic --public-key vendor.pub --now 2026-13-01").code, 2);
  EXPECT_EQ(run(dir_, "licensectl issue --key vendor.key --customer X --features serve --expires 2026-01-01 "
                      "--fingerprint a.fp --max-changed 3 --out x.lic").code, 2);  // too loose for 4
}

// Every file licensectl reads is size-capped and must be a regular file: a
// directory or an endless device is one line naming it.
TEST_F(Licensectl, DirectoryAndDeviceInputsNameTheFile) {
  for (const char* f : {"/", "/dev/zero"}) {
    const Outcome r = run(dir_, std::string("licensectl status ") + f + " --public-key vendor.pub");
    EXPECT_EQ(r.code, 2) << f;
  }
  EXPECT_EQ(run(dir_, "licensectl status / --public-key vendor.pub").err,
            "licensectl: error: '/' is a directory, not a file\n");
  EXPECT_EQ(run(dir_, "licensectl status /dev/zero --public-key vendor.pub").err,
            "licensectl: error: '/dev/zero' is a device, not a file\n");
  // The key loaders name the file once (they used to print "/dev/zero: /dev/zero: ...").
  const Outcome k = run(dir_, "licensectl status a.lic --public-key /dev/zero");
  EXPECT_EQ(k.code, 2);
  EXPECT_EQ(k.err, "licensectl: error: '/dev/zero' is a device, not a file\n");
  EXPECT_EQ(run(dir_, "licensectl status a.lic --public-key nokey.pub").err,
            "licensectl: error: cannot open 'nokey.pub': No such file or directory\n");
  EXPECT_EQ(run(dir_, "licensectl status a.lic --public-key a.lic").err,
            "licensectl: error: a.lic: neither a PEM Ed25519 public key ('BEGIN PUBLIC KEY') nor a keyring "
            "('gpulab-keyring: 1')\n");
  EXPECT_EQ(run(dir_, "licensectl issue --key nokey.key --customer X --features serve --expires 2027-01-01 "
                      "--floating --out x.lic").err,
            "licensectl: error: cannot open 'nokey.key': No such file or directory\n");
}

// --state at something that cannot hold a record: an input error that says
// what is wrong. It used to be CLOCK_ROLLBACK (exit 15), "fails its integrity
// check (edited?)", for a directory or an empty file.
TEST_F(Licensectl, AStatePathThatIsNoRecordIsAnInputErrorNotTampering) {
  std::filesystem::create_directory(dir_ / "statedir");
  write(dir_ / "empty.state", "");
  const std::pair<const char*, const char*> cases[] = {
      {"statedir", "'statedir' is a directory, not a file"},
      {"empty.state", "'empty.state' is empty, not a state record (delete it to start a new one)"},
      {"a.lic", "'a.lic' is not a state record (those start with 'gpulab-license-state:')"},
  };
  for (const auto& [state, why] : cases) {
    const Outcome r = status("2026-03-01", std::string("--root host-a --state ") + state);
    EXPECT_EQ(r.code, 2) << state;
    EXPECT_EQ(r.err, std::string("licensectl: error: last-seen state: ") + why + "\n");
    EXPECT_EQ(r.out.find("CLOCK_ROLLBACK"), std::string::npos) << r.out;
  }
  // A state file that does not exist yet is a first use; /dev/null keeps no record.
  EXPECT_EQ(status("2026-03-01", "--root host-a --state new.state").code, 0);
  EXPECT_EQ(read(dir_ / "new.state").rfind("gpulab-license-state: 1\n", 0), 0U);
  EXPECT_EQ(status("2026-03-01", "--root host-a --state /dev/null").code, 0);
}

TEST_F(Licensectl, AirGapRoundTripConsumesTheRequest) {
  ASSERT_EQ(run(dir_, "licensectl issue --key vendor.key --customer ACME --features serve --issued 2026-01-01 "
                      "--expires 2099-01-01 --floating --out ent.lic").code, 0);
  ASSERT_EQ(run(dir_, "licensectl activate-request --license ent.lic --root host-a --out req.txt").code, 0);
  ASSERT_EQ(run(dir_, "licensectl sign-activation req.txt --key vendor.key --license ent.lic --out act.lic").code, 0);
  const Outcome act = run(dir_, "licensectl activate act.lic --request req.txt --public-key vendor.pub --root host-a "
                            "--out installed.lic");
  ASSERT_EQ(act.code, 0) << act.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "req.txt"));
  EXPECT_EQ(run(dir_, "licensectl status installed.lic --public-key vendor.pub --root host-a --now " + today_utc()).code, 0);
  EXPECT_EQ(run(dir_, "licensectl status installed.lic --public-key vendor.pub --root host-b --now " + today_utc()).code, 14);
  // A second machine cannot reuse the activation with a request of its own.
  ASSERT_EQ(run(dir_, "licensectl activate-request --license ent.lic --root host-b --out req-b.txt").code, 0);
  const Outcome replay = run(dir_, "licensectl activate act.lic --request req-b.txt --public-key vendor.pub --root host-b "
                               "--out stolen.lic");
  EXPECT_EQ(replay.code, 2);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "stolen.lic"));
}

TEST_F(Licensectl, HwfpHidesRawIdentifiersUnlessAsked) {
  const Outcome plain = run(dir_, "hwfp --root host-a --json");
  ASSERT_EQ(plain.code, 0);
  EXPECT_EQ(plain.out.find("aaaaaaaa"), std::string::npos);
  const auto j = nlohmann::json::parse(plain.out);
  EXPECT_EQ(j["fingerprint_size"], 4);
  const Outcome raw = run(dir_, "hwfp --root host-a --show-raw");
  EXPECT_NE(raw.out.find("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), std::string::npos);
  EXPECT_EQ(run(dir_, "hwfp --root host-a --compare a.fp").code, 0);
  EXPECT_EQ(run(dir_, "hwfp --root host-b --compare a.fp").code, 1);
  EXPECT_EQ(run(dir_, "hwfp --root does-not-exist").code, 2);
}

TEST(LicensectlDemo, EveryScenarioPasses) {
  TempDir dir;
  const Outcome r = run(dir, "licensectl demo");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos);
}

}  // namespace

namespace {

// "No network code path at all", checked on the built library: no object in
// it refers to a socket, resolver or HTTP entry point.
TEST(LicensingLibrary, HasNoNetworkCodePath) {
  const std::string lib = std::string(GPULAB_BIN_DIR) + "/../labs/p11-licensing/libgpulab_licensing.a";
  ASSERT_TRUE(std::filesystem::exists(lib)) << lib;
  TempDir dir;
  const Outcome nm = shell(dir, "nm -u --format=posix '" + lib + "'");
  ASSERT_EQ(nm.code, 0) << nm.err;
  ASSERT_NE(nm.out.find("EVP_DigestVerify"), std::string::npos);  // the listing is real
  std::istringstream lines(nm.out);
  for (std::string name; lines >> name;) {
    std::string rest;
    std::getline(lines, rest);
    for (const char* net : {"socket", "connect", "getaddrinfo", "gethostbyname", "sendto", "recvfrom", "bind",
                            "listen", "accept", "curl_easy_init", "BIO_new_connect", "SSL_connect"}) {
      EXPECT_NE(name, net) << "the licensing library refers to " << net;
    }
  }
}

}  // namespace

// An air-gapped site, end to end through licensectl: the vendor rotates its
// key with a statement the old key signs, the site adds the new key offline,
// licences of both keys work, the retired key cannot mint new ones, and a
// signed revocation list turns a licence (or a key) off.
TEST_F(Licensectl, AnAirGappedSiteRotatesTheVendorKeyAndHonoursARevocationList) {
  ASSERT_EQ(run(dir_, "licensectl keyring-init vendor.pub --out site.keyring").code, 0);
  EXPECT_EQ(run(dir_, "licensectl keyring-init vendor.pub --out site.keyring").code, 2);  // never overwritten
  ASSERT_EQ(run(dir_, "licensectl keygen --out vendor2").code, 0);
  const Outcome rotate = run(dir_, "licensectl rotate-key --key vendor.key --new-public-key vendor2.pub "
                                   "--valid-from 2026-03-01 --retire-old 2026-03-31 --out rotation.txt");
  ASSERT_EQ(rotate.code, 0) << rotate.err;

  // A statement edited in transit, or signed by a key the site does not trust, changes nothing.
  const std::string keyring_before = read(dir_ / "site.keyring");
  std::string edited = read(dir_ / "rotation.txt");
  edited.replace(edited.find("valid_from: 2026-03-01"), 22, "valid_from: 2026-02-01");
  write(dir_ / "edited.txt", edited);
  const Outcome bad = run(dir_, "licensectl keyring-rotate edited.txt --keyring site.keyring");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("key rotation signature does not match"), std::string::npos) << bad.err;
  ASSERT_EQ(run(dir_, "licensectl keygen --out stranger").code, 0);
  ASSERT_EQ(run(dir_, "licensectl rotate-key --key stranger.key --new-public-key vendor2.pub --out forged.txt").code, 0);
  const Outcome forged = run(dir_, "licensectl keyring-rotate forged.txt --keyring site.keyring");
  EXPECT_EQ(forged.code, 2);
  EXPECT_NE(forged.err.find("which this keyring does not trust"), std::string::npos) << forged.err;
  EXPECT_EQ(read(dir_ / "site.keyring"), keyring_before);

  const Outcome added = run(dir_, "licensectl keyring-rotate rotation.txt --keyring site.keyring");
  ASSERT_EQ(added.code, 0) << added.err;
  EXPECT_NE(added.out.find("from 1970-01-01 until 2026-03-31"), std::string::npos) << added.out;
  EXPECT_NE(added.out.find("from 2026-03-01\n"), std::string::npos) << added.out;

  const auto issue = [&](const std::string& key, const std::string& issued, const std::string& out) {
    return run(dir_, "licensectl issue --key " + key + " --customer ACME --features serve --issued " + issued +
                         " --not-before 2026-01-01 --expires 2026-12-31 --floating --id " + out.substr(0, 1) +
                         "000000000000000 --out " + out);
  };
  ASSERT_EQ(issue("vendor2.key", "2026-04-01", "b.lic").code, 0);
  ASSERT_EQ(issue("vendor.key", "2026-05-01", "c.lic").code, 0);  // the old key, after its retirement
  const auto check = [&](const std::string& lic, const std::string& extra = "") {
    return run(dir_, "licensectl status " + lic + " --public-key site.keyring --now 2026-06-01 --root host-a " + extra);
  };
  EXPECT_EQ(check("a.lic").code, 0) << check("a.lic").out;  // the old key's licence, issued in its window
  EXPECT_EQ(check("b.lic").code, 0) << check("b.lic").out;
  const Outcome retired = check("c.lic");
  EXPECT_EQ(retired.code, 13);
  EXPECT_NE(retired.out.find("issued 2026-05-01 by key"), std::string::npos) << retired.out;
  EXPECT_NE(retired.out.find("a retired key"), std::string::npos) << retired.out;
  // Without the rotation the site does not know the new key.
  EXPECT_EQ(run(dir_, "licensectl status b.lic --public-key vendor.pub --now 2026-06-01").code, 13);

  // Revocation: licence b by id, then the old key as a whole (signed by the new key).
  ASSERT_EQ(run(dir_, "licensectl revoke --key vendor2.key --serial 1 --licence b000000000000000 --issued 2026-05-15 "
                      "--out revoked-1.txt").code,
            0);
  const Outcome revoked = check("b.lic", "--revocations revoked-1.txt");
  EXPECT_EQ(revoked.code, 16);
  EXPECT_NE(revoked.out.find("REVOKED: licence b000000000000000 is revoked (revocation list 1 of 2026-05-15)"),
            std::string::npos)
      << revoked.out;
  EXPECT_EQ(check("a.lic", "--revocations revoked-1.txt").code, 0);
  const std::string old_id = read(dir_ / "site.keyring").substr(read(dir_ / "site.keyring").find("key: ") + 5, 16);
  ASSERT_EQ(run(dir_, "licensectl revoke --key vendor2.key --serial 2 --key-id " + old_id +
                      " --issued 2026-05-20 --out revoked-2.txt").code,
            0);
  EXPECT_EQ(check("a.lic", "--revocations revoked-2.txt").code, 16);
  // The old key cannot revoke its replacement, and a tampered list is an error, not "nothing revoked".
  const std::string new_id = licensing::PublicKey::load(dir_ / "vendor2.pub").key_id();
  ASSERT_EQ(run(dir_, "licensectl revoke --key vendor.key --serial 3 --key-id " + new_id +
                      " --issued 2026-03-15 --out coup.txt")
                .code,
            0);
  const Outcome coup = check("b.lic", "--revocations coup.txt");
  EXPECT_EQ(coup.code, 2);
  EXPECT_NE(coup.err.find("revokes the newer key"), std::string::npos) << coup.err;
  std::string tampered = read(dir_ / "revoked-1.txt");
  tampered.replace(tampered.find("serial: 1"), 9, "serial: 9");
  write(dir_ / "tampered.txt", tampered);
  const Outcome t = check("b.lic", "--revocations tampered.txt");
  EXPECT_EQ(t.code, 2);
  EXPECT_NE(t.err.find("revocation list signature does not match"), std::string::npos) << t.err;
  EXPECT_EQ(t.err.find('\n'), t.err.size() - 1);  // one line
}
