// gpulabctl release-manifest / verify-release as a release engineer runs them: keys from
// P11's licensectl keygen, a folder of artifacts, then every way a release can be damaged,
// each refused with one line naming the file and a non-zero exit (docs/release/checklist.md).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gpulab_test/program_run.hpp"

namespace {

using gpulab_test::run_program;
namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void spit(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (auto pos = s.find(what); pos != std::string::npos; pos = s.find(what, pos + 1)) ++n;
  return n;
}

class ReleaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpulab-release-it-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    tmp_ = tmpl;
    rel_ = tmp_ / "release";
    fs::create_directories(rel_ / "bin");
    spit(rel_ / "bin/gpulabd", "pretend binary\n");
    spit(rel_ / "gpulab-0.1.0.tar.gz", std::string(3000, 'x'));
    spit(rel_ / "CHANGELOG.md", "# Changelog\n");
    for (const char* k : {"release", "other"}) {
      const auto r = run_program("licensectl", "keygen --out " + (tmp_ / k).string());
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    const auto signed_run = sign();
    ASSERT_EQ(signed_run.exit_code, 0) << signed_run.err;
    ASSERT_NE(signed_run.out.find("(3 artifacts)"), std::string::npos) << signed_run.out;
  }
  void TearDown() override { fs::remove_all(tmp_); }

  gpulab_test::ProgramRun sign() {
    return run_program("gpulabctl", "release-manifest " + rel_.string() + " --private-key " +
                                        (tmp_ / "release.key").string());
  }
  gpulab_test::ProgramRun verify(const std::string& key = "release") {
    return run_program("gpulabctl", "verify-release " + rel_.string() + " --public-key " +
                                        (tmp_ / (key + ".pub")).string());
  }

  fs::path tmp_;
  fs::path rel_;
};

TEST_F(ReleaseTest, AnUntouchedReleaseVerifies) {
  const auto r = verify();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(
      r.out.rfind("PASS " + rel_.string() + ": 3 artifacts match SHA256SUMS, signed by key ", 0),
      0u)
      << r.out;
  EXPECT_EQ(r.err, "");
  // The manifest is sha256sum's own format: coreutils checks the same files.
  EXPECT_EQ(std::system(
                ("cd '" + rel_.string() + "' && sha256sum --quiet --strict -c SHA256SUMS").c_str()),
            0);
  EXPECT_EQ(slurp(rel_ / "SHA256SUMS").find("  CHANGELOG.md\n"), 64u);
}

TEST_F(ReleaseTest, AChangedArtifactIsRefusedByName) {
  spit(rel_ / "bin/gpulabd", "pretend binary, patched\n");
  const auto r = verify();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "FAIL " + rel_.string() +
                       "/bin/gpulabd: SHA-256 differs from SHA256SUMS (changed after signing)\n");
}

TEST_F(ReleaseTest, AMissingArtifactIsRefusedByName) {
  fs::remove(rel_ / "CHANGELOG.md");
  const auto r = verify();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "FAIL " + rel_.string() + "/CHANGELOG.md: listed in SHA256SUMS but missing\n");
}

TEST_F(ReleaseTest, AnUnlistedFileIsRefusedByName) {
  spit(rel_ / "bin/backdoor", "#!/bin/sh\n");
  const auto r = verify();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "FAIL " + rel_.string() + "/bin/backdoor: not listed in SHA256SUMS\n");
}

TEST_F(ReleaseTest, EveryProblemIsReportedNotOnlyTheFirst) {
  spit(rel_ / "bin/gpulabd", "patched\n");
  fs::remove(rel_ / "CHANGELOG.md");
  spit(rel_ / "extra", "x");
  const auto r = verify();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(count(r.out, "FAIL "), 3) << r.out;
  EXPECT_EQ(count(r.out, "PASS"), 0) << r.out;
}

TEST_F(ReleaseTest, AManifestChangedToMatchAChangedArtifactIsRefused) {
  // The attacker's move: patch a binary and put its new hash into the manifest.
  spit(rel_ / "bin/gpulabd", "patched\n");
  std::string manifest = slurp(rel_ / "SHA256SUMS");
  const auto line = manifest.find("  bin/gpulabd\n");
  ASSERT_NE(line, std::string::npos);
  const std::string patched_hash =
      "d2e4e4ac1a9e0ab0c8c1bbb37f0e93ffba4a4d0f9d43b7b7bd3e0a8e8f1c6f1b";
  manifest.replace(line - 64, 64, patched_hash);
  spit(rel_ / "SHA256SUMS", manifest);
  const auto r = verify();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("gpulabctl: error: SHA256SUMS: the signature of key ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("does not match it (the manifest was changed after signing)\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(count(r.err, "\n"), 1) << r.err;
}

TEST_F(ReleaseTest, AManifestWithALineRemovedIsRefused) {
  std::string manifest = slurp(rel_ / "SHA256SUMS");
  manifest.erase(0, manifest.find('\n') + 1);
  spit(rel_ / "SHA256SUMS", manifest);
  const auto r = verify();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("SHA256SUMS: the signature of key "), std::string::npos) << r.err;
}

TEST_F(ReleaseTest, AnotherKeysSignatureIsRefusedNamingBothKeys) {
  const auto r = verify("other");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("gpulabctl: error: SHA256SUMS.sig: signed by key ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(", but --public-key is key "), std::string::npos) << r.err;
}

TEST_F(ReleaseTest, AMissingOrDamagedSignatureIsRefused) {
  const std::string sig = slurp(rel_ / "SHA256SUMS.sig");
  spit(rel_ / "SHA256SUMS.sig", sig.substr(0, sig.size() - 5) + "AAAA\n");
  auto r = verify();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("gpulabctl: error: SHA256SUMS", 0), 0u) << r.err;
  fs::remove(rel_ / "SHA256SUMS.sig");
  r = verify();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("gpulabctl: error: SHA256SUMS.sig: cannot open", 0), 0u) << r.err;
}

TEST_F(ReleaseTest, ALinkPlantedInASignedReleaseFailsVerification) {
  fs::create_symlink("/etc/passwd", rel_ / "bin" / "passwd");
  const auto r = verify();
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err,
            "gpulabctl: error: bin/passwd: is a symbolic link; a release holds plain files only\n");
}

TEST_F(ReleaseTest, ResigningAfterAChangeVerifiesAgain) {
  spit(rel_ / "bin/gpulabd", "rebuilt\n");
  ASSERT_EQ(verify().exit_code, 1);
  ASSERT_EQ(sign().exit_code, 0);
  EXPECT_EQ(verify().exit_code, 0);
}

TEST_F(ReleaseTest, BadUsageIsExitTwoNamingTheFile) {
  auto r = run_program("gpulabctl", "verify-release " + (tmp_ / "nope").string() +
                                        " --public-key " + (tmp_ / "release.pub").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "gpulabctl: error: '" + (tmp_ / "nope").string() + "' is not a folder\n");
  r = run_program("gpulabctl", "verify-release " + rel_.string() + " --public-key " +
                                   (tmp_ / "release.key").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find((tmp_ / "release.key").string() + ": not a PEM Ed25519 public key"),
            std::string::npos)
      << r.err;
  fs::create_symlink("/etc/passwd", rel_ / "passwd");
  r = sign();
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "gpulabctl: error: passwd: is a symbolic link; a release holds plain files only\n");
  r = run_program("gpulabctl", "release-manifest " + rel_.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--private-key is required"), std::string::npos) << r.err;
}

}  // namespace
