// The text format shared by licences, fingerprints, activation requests and
// the last-seen state: one "key: value" per line, LF endings, UTF-8.
//
// Strictness is the point: a parser that accepts two spellings of one licence
// lets an attacker probe which spelling the signature checker saw. So: keys in
// [a-z0-9_-], exactly one space after the colon, no leading or trailing blanks,
// no control characters, no CR, no BOM, a final newline, bounded sizes. The
// schema on top (license.cpp, ...) then reads the fields in one fixed order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpulab/errors.hpp"
#include "licensing/civil_date.hpp"

namespace licensing {

// Malformed, truncated or non-canonical input: exit 2 through gpulab::run_program.
struct FormatError : gpulab::UsageError {
  using gpulab::UsageError::UsageError;
};

inline constexpr std::size_t kMaxRecordBytes = 64 * 1024;
inline constexpr std::size_t kMaxLineBytes = 4096;

struct Field {
  std::string key;
  std::string value;
  std::size_t line = 0;    // 1-based, for messages
  std::size_t offset = 0;  // byte offset of the line in the text
};

// Throws FormatError("line N: ...").
std::vector<Field> parse_record(std::string_view text);

std::string format_field(std::string_view key, std::string_view value);

// A field's value as a canonical decimal in [0, max] / a YYYY-MM-DD date;
// throws FormatError("line N: KEY must be ...").
std::uint64_t uint_field(const Field& f, std::uint64_t max);
Date date_field(const Field& f);

// Reads the fields of a parsed record in the schema's order.
class FieldCursor {
 public:
  explicit FieldCursor(const std::vector<Field>& fields, std::string_view what)
      : fields_(fields), what_(what) {}

  // The next field must be `key`; throws "line N: expected 'key', found 'other'".
  const Field& take(std::string_view key);
  const Field* take_optional(std::string_view key);
  std::vector<const Field*> take_repeated(std::string_view key);
  void expect_end();
  [[nodiscard]] std::size_t index() const { return next_; }

 private:
  const std::vector<Field>& fields_;
  std::string what_;
  std::size_t next_ = 0;
};

// The last two fields of a signed record (rotation statements, revocation
// lists): key_id (16 lowercase hex) and signature (64 bytes, canonical
// base64), then the end; payload is every byte before the signature line.
struct SignedTail {
  std::string key_id;
  std::string payload;
  std::vector<std::uint8_t> signature;
};
SignedTail take_signed_tail(FieldCursor& cur, std::string_view text);

}  // namespace licensing
