#include "serving/tokenizer.hpp"

#include <fmt/format.h>

namespace serving {

std::size_t first_non_ascii(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i)
    if (static_cast<unsigned char>(text[i]) >= 0x80) return i;
  return std::string_view::npos;
}

std::optional<std::vector<TokenId>> encode(std::string_view text) {
  if (first_non_ascii(text) != std::string_view::npos) return std::nullopt;
  std::vector<TokenId> ids;
  ids.reserve(text.size());
  for (const char ch : text) ids.push_back(static_cast<TokenId>(static_cast<unsigned char>(ch)));
  return ids;
}

std::string decode(TokenId id) {
  const bool printable = (id >= 32 && id < 127) || id == '\n' || id == '\t';
  if (printable) return std::string(1, static_cast<char>(id));
  return fmt::format("<{}>", id);
}

std::string decode(const std::vector<TokenId>& ids) {
  std::string out;
  for (const TokenId id : ids) out += decode(id);
  return out;
}

}  // namespace serving
