// The server's tokenizer: one token per ASCII character (id = the byte,
// 0..127), so a prompt's token count is its length and any token-id prompt
// can be shown. Ids the model may produce beyond 127, and control characters
// other than tab and newline, decode as "<id>" so every completion is
// printable ASCII (and valid JSON) whatever a random-weight model emits.
// Decoding is for display: "<65>" typed into a prompt is four tokens.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace serving {

using TokenId = std::int32_t;
inline constexpr std::size_t kTokenizerVocab = 128;

// The ids of `text`, or nullopt naming nothing when a byte is not ASCII
// (the caller reports the field and the offset: first_non_ascii()).
std::optional<std::vector<TokenId>> encode(std::string_view text);
// Offset of the first byte >= 0x80, or npos.
std::size_t first_non_ascii(std::string_view text);
std::string decode(TokenId id);
std::string decode(const std::vector<TokenId>& ids);

}  // namespace serving
