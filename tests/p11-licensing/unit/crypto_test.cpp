// Ed25519 against RFC 8032 §7.1, and the strict encodings around it.
#include <gtest/gtest.h>

#include "licensing/digest.hpp"
#include "licensing/ed25519.hpp"
#include "licensing/encoding.hpp"
#include "test_support.hpp"

using namespace licensing;

namespace {

struct Rfc8032Vector {
  const char* secret;
  const char* public_key;
  const char* message;
  const char* signature;
};

// RFC 8032 section 7.1, TEST 1, TEST 2 and TEST 3.
constexpr Rfc8032Vector kVectors[] = {
    {"9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
     "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"},
    {"4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
     "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"},
    {"c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
     "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
     "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"},
};

std::string as_text(const Bytes& b) { return std::string(b.begin(), b.end()); }

TEST(Ed25519, Rfc8032VectorsSignAndVerify) {
  for (const auto& v : kVectors) {
    const PrivateKey sk = PrivateKey::from_seed(*from_hex(v.secret));
    EXPECT_EQ(to_hex(sk.public_key().raw()), v.public_key);
    const std::string msg = as_text(*from_hex(v.message));
    const Bytes sig = sk.sign(msg);
    EXPECT_EQ(to_hex(sig), v.signature);
    const PublicKey pk = PublicKey::from_raw(*from_hex(v.public_key));
    EXPECT_TRUE(pk.verify(msg, *from_hex(v.signature)));
  }
}

TEST(Ed25519, RejectsAnyFlippedBitOfMessageOrSignature) {
  const auto& v = kVectors[2];
  const PublicKey pk = PublicKey::from_raw(*from_hex(v.public_key));
  const Bytes sig = *from_hex(v.signature);
  const std::string msg = as_text(*from_hex(v.message));
  for (std::size_t bit = 0; bit < sig.size() * 8; bit += 7) {
    Bytes bad = sig;
    bad[bit / 8] = static_cast<std::uint8_t>(bad[bit / 8] ^ (1u << (bit % 8)));
    EXPECT_FALSE(pk.verify(msg, bad)) << "bit " << bit;
  }
  EXPECT_FALSE(pk.verify(msg + "x", sig));
  EXPECT_FALSE(pk.verify(msg, Bytes(sig.begin(), sig.end() - 1)));
}

TEST(Ed25519, PemRoundTripKeepsTheKey) {
  const PrivateKey sk = testing_support::key("pem round trip");
  const PrivateKey again = PrivateKey::from_pem(sk.pem());
  EXPECT_EQ(again.public_key().raw(), sk.public_key().raw());
  EXPECT_EQ(PublicKey::from_pem(sk.public_key().pem()).key_id(), sk.public_key().key_id());
  EXPECT_THROW(PublicKey::from_pem("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"),
               gpulab::UsageError);
  EXPECT_THROW(PrivateKey::from_pem(sk.public_key().pem()), gpulab::UsageError);
}

TEST(Encoding, Base64IsStrict) {
  const Bytes b{0xde, 0xad, 0xbe, 0xef};
  EXPECT_EQ(to_base64(b), "3q2+7w==");
  EXPECT_EQ(*from_base64("3q2+7w=="), b);
  EXPECT_FALSE(from_base64("3q2+7x=="));   // non-zero padding bits: a second spelling
  EXPECT_FALSE(from_base64("3q2+7w"));     // missing padding
  EXPECT_FALSE(from_base64("3q2+\n7w==")); // whitespace
  EXPECT_FALSE(from_base64("3q2-7w=="));   // base64url alphabet
  EXPECT_FALSE(from_base64("3q=+7w=="));   // padding inside
}

TEST(Encoding, HexAndIntegersAreCanonical) {
  EXPECT_TRUE(is_lower_hex("00ff", 4));
  EXPECT_FALSE(is_lower_hex("00FF", 4));
  EXPECT_FALSE(from_hex("0"));
  EXPECT_EQ(parse_uint("8", 100), 8u);
  EXPECT_FALSE(parse_uint("08", 100));
  EXPECT_FALSE(parse_uint("+8", 100));
  EXPECT_FALSE(parse_uint("101", 100));
  EXPECT_FALSE(parse_uint("99999999999999999999999", ~0ull));
}

TEST(Encoding, Utf8Validation) {
  EXPECT_TRUE(is_valid_utf8("Ünïcode AG \xe2\x82\xac \xf0\x9f\x9a\x80"));
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));      // surrogate
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(is_valid_utf8("abc\xe2\x82"));       // truncated sequence
}

TEST(Digest, ConstantTimeEqualComparesContents) {
  const Bytes a{1, 2, 3}, b{1, 2, 3}, c{1, 2, 4};
  EXPECT_TRUE(constant_time_equal(a, b));
  EXPECT_FALSE(constant_time_equal(a, c));
  EXPECT_FALSE(constant_time_equal(a, Bytes{1, 2}));
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

}  // namespace
