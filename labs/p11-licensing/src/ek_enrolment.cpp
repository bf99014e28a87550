#include "licensing/ek_enrolment.hpp"

#include <fmt/format.h>

#include "gpulab/errors.hpp"
#include "gpulab/text.hpp"
#include "licensing/digest.hpp"
#include "licensing/record.hpp"
#include "licensing/tpm_tools.hpp"

namespace licensing {
namespace {

// tpm2_makecredential's output for an RSA-2048 EK is about 330 bytes.
constexpr std::size_t kMaxEkCredentialBytes = 4096;

std::string at_line(const Field& f) {
  return "line " + std::to_string(f.line) + ": " + f.key;
}

Bytes hex_field(const Field& f, std::size_t min_bytes, std::size_t max_bytes) {
  auto v = from_hex(f.value);
  if (!v || v->size() < min_bytes || v->size() > max_bytes) {
    throw FormatError(min_bytes == max_bytes
                          ? fmt::format("{} must be {} lowercase hex digits", at_line(f), 2 * max_bytes)
                          : fmt::format("{} must be lowercase hex of {}..{} bytes", at_line(f),
                                        min_bytes, max_bytes));
  }
  return std::move(*v);
}

std::string id_field(const Field& f, std::size_t hex_digits) {
  if (!is_lower_hex(f.value, hex_digits))
    throw FormatError(fmt::format("{} must be {} lowercase hex digits", at_line(f), hex_digits));
  return f.value;
}

Bytes ak_name_field(const Field& f) {
  Bytes name = hex_field(f, 34, 34);
  if (name[0] != 0x00 || name[1] != 0x0b)
    throw FormatError(at_line(f) + " must be a sha256 TPM name (000b followed by 32 bytes)");
  return name;
}

// "pcrs: BANK:N,..." and one "pcr_value" per PCR, as policies write them.
void take_pcrs(FieldCursor& cur, PcrSelection& selection, std::vector<Bytes>& values) {
  const Field& pcrs = cur.take("pcrs");
  selection = parse_pcr_selection(pcrs.value, at_line(pcrs));
  for (const Field* f : cur.take_repeated("pcr_value"))
    values.push_back(hex_field(*f, kPcrDigestBytes, kPcrDigestBytes));
  if (values.size() != selection.pcrs.size()) {
    throw FormatError(fmt::format("pcrs lists {} PCRs and {} pcr_value lines follow",
                                  selection.pcrs.size(), values.size()));
  }
}

std::string format_pcrs(const PcrSelection& selection, const std::vector<Bytes>& values) {
  std::string out = format_field("pcrs", format_pcr_selection(selection));
  for (const Bytes& v : values) out += format_field("pcr_value", to_hex(v));
  return out;
}

void expect_canonical(const std::string& formatted, std::string_view text, std::string_view what) {
  if (formatted != text) throw FormatError(std::string(what) + " is not in canonical form");
}

std::string hex_sha256(const Bytes& b) {
  return sha256_hex(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
}

std::string short_id(std::string_view id) {
  return std::string(id.substr(0, 8));
}

}  // namespace

// ---- the enrolment request ----

std::string format_ek_request(const EkEnrolRequest& r) {
  std::string out = format_field("gpulab-attest-ek-request", "1");
  out += format_field("license_id", r.license_id);
  out += format_field("requested", format_date(r.requested));
  out += format_field("ak_public", to_hex(r.ak_public));
  out += format_field("ak_name", to_hex(r.ak_name));
  out += format_pcrs(r.selection, r.golden);
  const std::string pem = ek_certificate_pem(r.ek_certificate);
  for (const auto line : gpulab::split_fields(pem, '\n'))
    if (!line.empty()) out += format_field("ek_certificate", line);
  return out + format_field("digest", sha256_hex(out));
}

EkEnrolRequest parse_ek_request(std::string_view text) {
  const auto fields = parse_record(text);
  FieldCursor cur(fields, "EK enrolment request");
  if (cur.take("gpulab-attest-ek-request").value != "1")
    throw FormatError("unsupported EK enrolment request version");
  EkEnrolRequest r;
  r.license_id = id_field(cur.take("license_id"), 16);
  r.requested = date_field(cur.take("requested"));
  r.ak_public = hex_field(cur.take("ak_public"), 1, kMaxAkPublicBytes);
  r.ak_name = ak_name_field(cur.take("ak_name"));
  take_pcrs(cur, r.selection, r.golden);
  std::string pem;
  for (const Field* f : cur.take_repeated("ek_certificate")) pem += f->value + "\n";
  if (pem.empty()) throw FormatError("the request carries no ek_certificate lines");
  const Field& digest = cur.take("digest");
  cur.expect_end();
  const std::string expect = sha256_hex(text.substr(0, digest.offset));
  if (!is_lower_hex(digest.value, 64) ||
      !constant_time_equal(reinterpret_cast<const std::uint8_t*>(expect.data()),
                           reinterpret_cast<const std::uint8_t*>(digest.value.data()), 64)) {
    throw FormatError("the EK enrolment request's digest does not match its contents (corrupted in "
                      "transfer?)");
  }
  try {
    r.ek_certificate = ek_certificate_der(pem);
  } catch (const gpulab::UsageError& e) {
    throw FormatError(std::string("ek_certificate: ") + e.what());
  }
  expect_canonical(format_ek_request(r), text, "the EK enrolment request");
  return r;
}

// ---- the credential challenge and the vendor's pending record ----

std::string format_ek_challenge(const EkChallenge& c) {
  std::string out = format_field("gpulab-attest-ek-challenge", "1");
  out += format_field("license_id", c.license_id);
  out += format_field("challenge_id", c.challenge_id);
  out += format_field("issued", format_date(c.issued));
  out += format_field("ak_name", to_hex(c.ak_name));
  out += format_field("credential", to_base64(c.credential));
  return out;
}

EkChallenge parse_ek_challenge(std::string_view text) {
  const auto fields = parse_record(text);
  FieldCursor cur(fields, "EK credential challenge");
  if (cur.take("gpulab-attest-ek-challenge").value != "1")
    throw FormatError("unsupported EK credential challenge version");
  EkChallenge c;
  c.license_id = id_field(cur.take("license_id"), 16);
  c.challenge_id = id_field(cur.take("challenge_id"), 32);
  c.issued = date_field(cur.take("issued"));
  c.ak_name = ak_name_field(cur.take("ak_name"));
  const Field& cred = cur.take("credential");
  auto raw = from_base64(cred.value);
  if (!raw || raw->empty() || raw->size() > kMaxEkCredentialBytes)
    throw FormatError(at_line(cred) + " must be canonical base64 of 1..4096 bytes");
  c.credential = std::move(*raw);
  cur.expect_end();
  expect_canonical(format_ek_challenge(c), text, "the EK credential challenge");
  return c;
}

std::string format_ek_pending(const EkPending& p) {
  std::string out = format_field("gpulab-attest-ek-pending", "1");
  out += format_field("license_id", p.license_id);
  out += format_field("challenge_id", p.challenge_id);
  out += format_field("issued", format_date(p.issued));
  out += format_field("ek_sha256", p.ek_sha256);
  out += format_field("ak_sha256", p.ak_sha256);
  out += format_field("secret_sha256", p.secret_sha256);
  out += format_pcrs(p.selection, p.golden);
  return out;
}

EkPending parse_ek_pending(std::string_view text) {
  const auto fields = parse_record(text);
  FieldCursor cur(fields, "pending EK enrolment");
  if (cur.take("gpulab-attest-ek-pending").value != "1")
    throw FormatError("unsupported pending EK enrolment version");
  EkPending p;
  p.license_id = id_field(cur.take("license_id"), 16);
  p.challenge_id = id_field(cur.take("challenge_id"), 32);
  p.issued = date_field(cur.take("issued"));
  p.ek_sha256 = id_field(cur.take("ek_sha256"), 64);
  p.ak_sha256 = id_field(cur.take("ak_sha256"), 64);
  p.secret_sha256 = id_field(cur.take("secret_sha256"), 64);
  take_pcrs(cur, p.selection, p.golden);
  cur.expect_end();
  expect_canonical(format_ek_pending(p), text, "the pending EK enrolment");
  return p;
}

// ---- the answer ----

std::string format_ek_answer(const EkAnswer& a) {
  std::string out = format_field("gpulab-attest-ek-answer", "1");
  out += format_field("license_id", a.license_id);
  out += format_field("challenge_id", a.challenge_id);
  out += format_field("secret", to_hex(a.secret));
  return out;
}

EkAnswer parse_ek_answer(std::string_view text) {
  const auto fields = parse_record(text);
  FieldCursor cur(fields, "EK answer");
  if (cur.take("gpulab-attest-ek-answer").value != "1")
    throw FormatError("unsupported EK answer version");
  EkAnswer a;
  a.license_id = id_field(cur.take("license_id"), 16);
  a.challenge_id = id_field(cur.take("challenge_id"), 32);
  a.secret = hex_field(cur.take("secret"), kEkSecretBytes, kEkSecretBytes);
  cur.expect_end();
  expect_canonical(format_ek_answer(a), text, "the EK answer");
  return a;
}

// ---- the vendor's two steps ----

EkChallengeMade make_ek_challenge(const EkEnrolRequest& request, const EkCaStore& cas, Date today,
                                  std::string_view request_name) {
  std::string ek_public;
  AkPublicArea ak;
  try {
    ek_public = cas.verify_ek(request.ek_certificate);
    ak = check_ak_public(request.ak_public);
  } catch (const gpulab::UsageError& e) {
    throw gpulab::UsageError(fmt::format("{}: {}", request_name, e.what()));
  }
  if (ak.name != request.ak_name) {
    throw gpulab::UsageError(fmt::format(
        "{}: ak_name {}... is not the TPM name of ak_public ({}...; sha256 of the public area)",
        request_name, to_hex(request.ak_name).substr(0, 16), to_hex(ak.name).substr(0, 16)));
  }
  const Bytes secret = random_bytes(kEkSecretBytes);
  EkChallengeMade made;
  made.challenge = EkChallenge{request.license_id, to_hex(random_bytes(16)), ak.name,
                               make_credential(ek_public, ak.name, secret), today};
  made.pending = EkPending{request.license_id,
                           made.challenge.challenge_id,
                           hex_sha256(request.ek_certificate),
                           ak_fingerprint(ak.der),
                           hex_sha256(secret),
                           request.selection,
                           request.golden,
                           today};
  return made;
}

AttestPolicy certify_ek_answer(const EkAnswer& answer, const EkPending& pending, Date today,
                               std::string_view answer_name) {
  if (answer.license_id != pending.license_id) {
    throw gpulab::UsageError(
        fmt::format("{} is for licence {}, the pending enrolment for licence {}", answer_name,
                    answer.license_id, pending.license_id));
  }
  if (answer.challenge_id != pending.challenge_id) {
    throw gpulab::UsageError(fmt::format(
        "{} answers challenge {}..., the pending one is {}... (a replayed or stale answer)",
        answer_name, short_id(answer.challenge_id), short_id(pending.challenge_id)));
  }
  if (today < pending.issued) {
    throw gpulab::UsageError(fmt::format(
        "{}: its challenge {}... was made on {}, after today ({}): check the vendor's clock",
        answer_name, short_id(pending.challenge_id), format_date(pending.issued),
        format_date(today)));
  }
  if (today.day - pending.issued.day > kEkChallengeMaxAgeDays) {
    throw gpulab::UsageError(fmt::format(
        "{}: its challenge {}... was made on {}, more than {} days before {}: make a new one",
        answer_name, short_id(pending.challenge_id), format_date(pending.issued),
        kEkChallengeMaxAgeDays, format_date(today)));
  }
  const Digest got = sha256(
      std::string_view(reinterpret_cast<const char*>(answer.secret.data()), answer.secret.size()));
  const auto want = from_hex(pending.secret_sha256);
  if (!want || !constant_time_equal(Bytes(got.begin(), got.end()), *want)) {
    throw gpulab::UsageError(fmt::format(
        "{}: secret is not the one the credential wrapped (not recovered by the TPM that holds the "
        "certified EK with this AK loaded)",
        answer_name));
  }
  AttestPolicy p{pending.license_id, pending.ak_sha256, pending.selection, pending.golden};
  p.trust = AkTrust::kEkCertified;
  p.ek_sha256 = pending.ek_sha256;
  return p;
}

}  // namespace licensing
