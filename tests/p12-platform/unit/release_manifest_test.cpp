// The release manifest's format and signature in-process (platform/release_manifest.hpp);
// release_integration_test.cpp runs the same through gpulabctl.
#include "platform/release_manifest.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "gpulab/errors.hpp"
#include "licensing/digest.hpp"
#include "licensing/encoding.hpp"

namespace {

using namespace platform::release;
namespace fs = std::filesystem;

const std::string kHash(64, 'a');

std::string parse_error(const std::string& text) {
  try {
    parse_manifest(text);
  } catch (const gpulab::UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(ReleaseManifest, RendersAndParsesSha256sumLines) {
  const std::vector<Entry> entries{{"a.tar.gz", kHash}, {"bin/gpulabd", std::string(64, '0')}};
  const auto text = render_manifest(entries);
  EXPECT_EQ(text, kHash + "  a.tar.gz\n" + std::string(64, '0') + "  bin/gpulabd\n");
  const auto back = parse_manifest(text);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[1].path, "bin/gpulabd");
  EXPECT_EQ(back[1].sha256, std::string(64, '0'));
}

TEST(ReleaseManifest, RefusesAnythingButCanonicalLines) {
  EXPECT_EQ(parse_error(kHash + "  x\n"), "");
  EXPECT_EQ(parse_error(std::string(64, 'A') + "  x\n"),
            "SHA256SUMS:1: the SHA-256 must be 64 lowercase hex digits");
  EXPECT_EQ(parse_error(kHash + " *x\n"), "SHA256SUMS:1: expected '<64 hex digits>  <path>'");
  EXPECT_EQ(parse_error(kHash + "  x"), "SHA256SUMS:1: the last line has no newline");
  EXPECT_EQ(parse_error(kHash + "  x\n" + kHash + "  x\n"), "SHA256SUMS:2: x is listed twice");
  EXPECT_EQ(parse_error(kHash + "  ../etc/passwd\n"),
            "SHA256SUMS:1: path '../etc/passwd' must be relative, inside the release folder");
  EXPECT_EQ(parse_error(kHash + "  /etc/passwd\n"),
            "SHA256SUMS:1: path '/etc/passwd' must be relative, inside the release folder");
  EXPECT_NE(parse_error(kHash + "  a//b\n"), "");
  EXPECT_NE(parse_error(kHash + "  ./a\n"), "");
  EXPECT_NE(parse_error("\n"), "");
}

class ReleaseDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/gpulab-release-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::ofstream(dir_ / "a") << "alpha\n";
    fs::create_directory(dir_ / "sub");
    std::ofstream(dir_ / "sub" / "b") << "beta\n";
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  licensing::PrivateKey key_ = licensing::PrivateKey::generate();
};

TEST_F(ReleaseDirTest, ListsPlainFilesRecursivelyWithoutTheManifestItself) {
  write_manifest(dir_, key_);
  EXPECT_EQ(list_artifacts(dir_), (std::vector<std::string>{"a", "sub/b"}));
  const auto v = verify(dir_, key_.public_key());
  EXPECT_TRUE(v.problems.empty());
  EXPECT_EQ(v.summary.artifacts, 2u);
  EXPECT_EQ(v.summary.key_id, key_.public_key().key_id());
  EXPECT_EQ(artifact_sha256(dir_ / "a"), licensing::sha256_hex("alpha\n"));
}

TEST_F(ReleaseDirTest, AnEmptyFolderIsNotARelease) {
  const fs::path empty = dir_ / "empty";
  fs::create_directory(empty);
  EXPECT_THROW(write_manifest(empty, key_), gpulab::UsageError);
}

TEST_F(ReleaseDirTest, ASignatureOverTheBareManifestDoesNotVerify) {
  // The same vendor key signs licences (P11): only signatures over the release prefix count.
  write_manifest(dir_, key_);
  std::ifstream in(dir_ / std::string(kManifestName));
  const std::string manifest{std::istreambuf_iterator<char>(in), {}};
  std::ofstream(dir_ / std::string(kSignatureName), std::ios::trunc)
      << "ed25519 " << key_.public_key().key_id() << " "
      << licensing::to_base64(key_.sign(manifest)) << "\n";
  EXPECT_THROW(verify(dir_, key_.public_key()), gpulab::RunError);
}

}  // namespace
