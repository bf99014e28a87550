#include "licensing/tpm_quote.hpp"

#include <fmt/format.h>
#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>

#include "gpulab/errors.hpp"
#include "gpulab/text.hpp"
#include "licensing/digest.hpp"
#include "licensing/record.hpp"

namespace licensing {
namespace {

// TPM 2.0 Library part 2 constants.
constexpr std::uint32_t kTpmGeneratedValue = 0xff544347;  // "\xffTCG"
constexpr std::uint16_t kStAttestQuote = 0x8018;
constexpr std::uint16_t kAlgSha256 = 0x000b;
constexpr std::uint16_t kAlgEcdsa = 0x0018;

// Big-endian reader over TPM marshalled bytes; every read checks the length
// left, so a hostile size field ends in FormatError, never past the buffer.
class Reader {
 public:
  Reader(const Bytes& b, std::string_view what) : b_(b), what_(what) {}
  std::uint64_t uint(std::size_t n) {
    need(n);
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v = (v << 8) | b_[pos_++];
    return v;
  }
  Bytes bytes(std::size_t n) {
    need(n);
    Bytes out(b_.begin() + static_cast<std::ptrdiff_t>(pos_),
              b_.begin() + static_cast<std::ptrdiff_t>(pos_ + n));
    pos_ += n;
    return out;
  }
  Bytes sized() { return bytes(static_cast<std::size_t>(uint(2))); }  // a TPM2B_*
  void expect_end() const {
    if (pos_ != b_.size())
      throw FormatError(fmt::format("{}: {} bytes after the end", what_, b_.size() - pos_));
  }

 private:
  void need(std::size_t n) const {
    if (b_.size() - pos_ < n) throw FormatError(std::string(what_) + ": truncated");
  }
  const Bytes& b_;
  std::string_view what_;
  std::size_t pos_ = 0;
};

struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};
struct SigFree {
  void operator()(ECDSA_SIG* s) const { ECDSA_SIG_free(s); }
};

// TPMT_SIGNATURE (ECDSA, SHA-256) as the DER ECDSA-Sig-Value OpenSSL verifies.
Bytes ecdsa_der(const Bytes& tpm_signature) {
  Reader r(tpm_signature, "quote signature");
  const auto alg = r.uint(2);
  const auto hash = r.uint(2);
  if (alg != kAlgEcdsa || hash != kAlgSha256) {
    throw FormatError(fmt::format(
        "quote signature: algorithm 0x{:04x}/0x{:04x}, only ECDSA with SHA-256 is accepted", alg,
        hash));
  }
  const Bytes rb = r.sized();
  const Bytes sb = r.sized();
  r.expect_end();
  if (rb.empty() || sb.empty() || rb.size() > 66 || sb.size() > 66)
    throw FormatError("quote signature: r or s has an impossible size");
  std::unique_ptr<ECDSA_SIG, SigFree> sig(ECDSA_SIG_new());
  BIGNUM* br = BN_bin2bn(rb.data(), static_cast<int>(rb.size()), nullptr);
  BIGNUM* bs = BN_bin2bn(sb.data(), static_cast<int>(sb.size()), nullptr);
  if (!sig || !br || !bs || ECDSA_SIG_set0(sig.get(), br, bs) != 1) {
    BN_free(br);
    BN_free(bs);
    throw std::runtime_error("OpenSSL: out of memory");
  }
  const int n = i2d_ECDSA_SIG(sig.get(), nullptr);
  Bytes der(static_cast<std::size_t>(n > 0 ? n : 0));
  unsigned char* p = der.data();
  if (n <= 0 || i2d_ECDSA_SIG(sig.get(), &p) != n)
    throw std::runtime_error("OpenSSL: i2d_ECDSA_SIG");
  return der;
}

bool signature_verifies(const Bytes& ak_public, const Bytes& attest, const Bytes& tpm_signature) {
  const unsigned char* p = ak_public.data();
  std::unique_ptr<EVP_PKEY, PkeyFree> key(
      d2i_PUBKEY(nullptr, &p, static_cast<long>(ak_public.size())));
  if (!key || p != ak_public.data() + ak_public.size() ||
      EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_EC)
    throw FormatError("the attestation key is not a DER EC public key");
  const Bytes der = ecdsa_der(tpm_signature);
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestVerifyInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key.get()) != 1)
    throw std::runtime_error("OpenSSL: EVP_DigestVerifyInit");
  return EVP_DigestVerify(ctx.get(), der.data(), der.size(), attest.data(), attest.size()) == 1;
}

std::string short_hex(const Bytes& b) {
  return to_hex(b).substr(0, 16);
}

}  // namespace

PcrSelection parse_pcr_selection(std::string_view text, std::string_view what) {
  const auto bad = [&](const std::string& why) {
    return FormatError(fmt::format("{}: {} (expected e.g. 'sha256:0,7,16'), got '{}'", what, why,
                                   text.substr(0, 80)));
  };
  if (text.size() > 100) throw bad("longer than 100 characters");
  if (text.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789:,") != std::string_view::npos)
    throw bad("unexpected character");
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) throw bad("no bank");
  PcrSelection s;
  s.bank = std::string(text.substr(0, colon));
  if (s.bank != "sha256") throw bad("the only PCR bank accepted is sha256");
  for (const auto& field : gpulab::split_fields(text.substr(colon + 1), ',')) {
    const auto v = parse_uint(field, kPcrCount - 1);
    if (!v) throw bad("PCRs are canonical decimals 0..23");
    if (!s.pcrs.empty() && *v <= s.pcrs.back()) throw bad("PCRs must be strictly ascending");
    s.pcrs.push_back(static_cast<unsigned>(*v));
  }
  if (s.pcrs.empty()) throw bad("no PCRs");
  return s;
}

std::string format_pcr_selection(const PcrSelection& s) {
  return s.bank + ":" + fmt::format("{}", fmt::join(s.pcrs, ","));
}

QuoteInfo parse_quote_info(const Bytes& attest) {
  if (attest.size() > kMaxAttestBytes) throw FormatError("quote: larger than 1024 bytes");
  Reader r(attest, "quote");
  if (r.uint(4) != kTpmGeneratedValue) throw FormatError("quote: not generated by a TPM (magic)");
  if (r.uint(2) != kStAttestQuote) throw FormatError("quote: not a TPM2_Quote attestation");
  (void)r.sized();  // qualifiedSigner: the AK's name; the signature check binds the key
  QuoteInfo q;
  q.extra_data = r.sized();
  (void)r.bytes(17 + 8);  // clockInfo, firmwareVersion: not part of this policy
  if (r.uint(4) != 1) throw FormatError("quote: must select exactly one PCR bank");
  if (r.uint(2) != kAlgSha256) throw FormatError("quote: the PCR bank is not sha256");
  const Bytes bitmap = r.bytes(static_cast<std::size_t>(r.uint(1)));  // sizeofSelect, pcrSelect
  for (std::size_t byte = 0; byte < bitmap.size(); ++byte) {
    for (unsigned bit = 0; bit < 8; ++bit) {
      if (((bitmap[byte] >> bit) & 1) == 0) continue;
      const auto pcr = static_cast<unsigned>(byte * 8 + bit);
      if (pcr >= kPcrCount) throw FormatError("quote: selects a PCR above 23");
      q.selection.pcrs.push_back(pcr);
    }
  }
  q.pcr_digest = r.sized();
  r.expect_end();
  if (q.pcr_digest.size() != kPcrDigestBytes)
    throw FormatError("quote: the PCR digest is not SHA-256");
  return q;
}

std::string ak_fingerprint(const Bytes& ak_public) {
  const Digest d =
      sha256(std::string_view(reinterpret_cast<const char*>(ak_public.data()), ak_public.size()));
  return to_hex(d.data(), d.size());
}

void verify_quote(const TpmQuote& quote, const Bytes& nonce, const PcrSelection& expected,
                  const std::vector<Bytes>& golden, std::string_view golden_source) {
  if (!signature_verifies(quote.ak_public, quote.attest, quote.signature)) {
    throw gpulab::UsageError(
        "the quote's signature does not verify with the request's attestation key (signed by "
        "another TPM's key?)");
  }
  const QuoteInfo info = parse_quote_info(quote.attest);
  if (info.extra_data != nonce) {
    throw gpulab::UsageError(fmt::format(
        "the quote was made for nonce {}..., not this challenge's {}... (a replayed quote)",
        short_hex(info.extra_data), short_hex(nonce)));
  }
  if (info.selection != expected || quote.selection != expected) {
    throw gpulab::UsageError(fmt::format("the quote covers PCRs {}, the policy needs {}",
                                         format_pcr_selection(info.selection),
                                         format_pcr_selection(expected)));
  }
  std::string concat;
  for (const Bytes& v : quote.pcr_values) concat.append(v.begin(), v.end());
  const Digest d = sha256(concat);
  if (quote.pcr_values.size() != expected.pcrs.size() ||
      !constant_time_equal(Bytes(d.begin(), d.end()), info.pcr_digest)) {
    throw gpulab::UsageError(
        "the PCR values in the request do not match the digest the TPM signed (edited request?)");
  }
  for (std::size_t i = 0; i < expected.pcrs.size(); ++i) {
    if (quote.pcr_values[i] != golden.at(i)) {
      throw gpulab::UsageError(fmt::format(
          "PCR {} ({}) is {}..., the golden value in {} is {}...: the machine's measured state "
          "changed",
          expected.pcrs[i], expected.bank, short_hex(quote.pcr_values[i]), golden_source,
          short_hex(golden[i])));
    }
  }
}

}  // namespace licensing
