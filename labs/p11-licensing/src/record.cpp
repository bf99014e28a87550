#include "licensing/record.hpp"

#include "licensing/encoding.hpp"

namespace licensing {

namespace {

[[noreturn]] void fail(std::size_t line, const std::string& what) {
  throw FormatError("line " + std::to_string(line) + ": " + what);
}

bool key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

}  // namespace

std::vector<Field> parse_record(std::string_view text) {
  if (text.empty()) throw FormatError("empty file");
  if (text.size() > kMaxRecordBytes) {
    throw FormatError("larger than " + std::to_string(kMaxRecordBytes) + " bytes");
  }
  if (text.substr(0, 3) == "\xEF\xBB\xBF") throw FormatError("starts with a UTF-8 byte-order mark");
  if (!is_valid_utf8(text)) throw FormatError("not valid UTF-8");
  if (text.back() != '\n') throw FormatError("does not end with a newline (truncated?)");

  std::vector<Field> fields;
  std::size_t pos = 0;
  std::size_t line = 0;
  while (pos < text.size()) {
    ++line;
    const std::size_t eol = text.find('\n', pos);
    const std::string_view l = text.substr(pos, eol - pos);
    if (l.size() > kMaxLineBytes) fail(line, "longer than " + std::to_string(kMaxLineBytes) + " bytes");
    for (char c : l) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7f) {
        fail(line, c == '\r' ? "CR line ending (only LF is allowed)" : "control character");
      }
    }
    const std::size_t colon = l.find(':');
    if (colon == std::string_view::npos || colon == 0) fail(line, "expected 'key: value'");
    const std::string_view key = l.substr(0, colon);
    for (char c : key) {
      if (!key_char(c)) fail(line, "key '" + std::string(key) + "' has characters outside [a-z0-9_-]");
    }
    if (colon + 2 > l.size() || l[colon + 1] != ' ') fail(line, "expected one space and a value after ':'");
    const std::string_view value = l.substr(colon + 2);
    if (value.front() == ' ' || value.back() == ' ') fail(line, "value has leading or trailing blanks");
    fields.push_back(Field{std::string(key), std::string(value), line, pos});
    pos = eol + 1;
  }
  return fields;
}

std::string format_field(std::string_view key, std::string_view value) {
  std::string out;
  out.reserve(key.size() + value.size() + 3);
  out.append(key).append(": ").append(value).push_back('\n');
  return out;
}

const Field& FieldCursor::take(std::string_view key) {
  if (next_ >= fields_.size()) {
    throw FormatError(what_ + " ends before field '" + std::string(key) + "' (truncated?)");
  }
  const Field& f = fields_[next_];
  if (f.key != key) {
    fail(f.line, "expected field '" + std::string(key) + "', found '" + f.key +
                     "' (fields must appear once, in canonical order)");
  }
  ++next_;
  return f;
}

const Field* FieldCursor::take_optional(std::string_view key) {
  if (next_ < fields_.size() && fields_[next_].key == key) return &fields_[next_++];
  return nullptr;
}

std::vector<const Field*> FieldCursor::take_repeated(std::string_view key) {
  std::vector<const Field*> out;
  while (const Field* f = take_optional(key)) out.push_back(f);
  return out;
}

void FieldCursor::expect_end() {
  if (next_ < fields_.size()) {
    fail(fields_[next_].line, "unexpected field '" + fields_[next_].key + "' after the end of the " + what_);
  }
}

std::uint64_t uint_field(const Field& f, std::uint64_t max) {
  const auto v = parse_uint(f.value, max);
  if (!v) {
    throw FormatError("line " + std::to_string(f.line) + ": " + f.key +
                      " must be a canonical decimal integer between 0 and " + std::to_string(max));
  }
  return *v;
}

Date date_field(const Field& f) {
  const auto d = parse_date(f.value);
  if (!d) throw FormatError("line " + std::to_string(f.line) + ": " + f.key + " must be a YYYY-MM-DD date");
  return *d;
}

SignedTail take_signed_tail(FieldCursor& cur, std::string_view text) {
  SignedTail t;
  const Field& id = cur.take("key_id");
  if (!is_lower_hex(id.value, 16)) throw FormatError("line " + std::to_string(id.line) + ": key_id must be 16 lowercase hex digits");
  t.key_id = id.value;
  const Field& sig = cur.take("signature");
  cur.expect_end();
  auto raw = from_base64(sig.value);
  if (!raw || raw->size() != 64) {
    throw FormatError("line " + std::to_string(sig.line) + ": signature must be 64 bytes in canonical base64");
  }
  t.signature = std::move(*raw);
  t.payload = std::string(text.substr(0, sig.offset));
  return t;
}

}  // namespace licensing
