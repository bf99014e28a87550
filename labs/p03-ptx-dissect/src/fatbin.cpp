#include "ptx_dissect/fatbin.hpp"

#include <fmt/format.h>

#include <cstring>
#include <stdexcept>

namespace ptx_dissect {

namespace {

constexpr std::uint32_t kMagic = 0xBA55ED50;

template <class T>
T read_le(std::span<const std::uint8_t> b, std::size_t off) {
  if (off + sizeof(T) > b.size())
    throw std::runtime_error(fmt::format("fatbin truncated at offset {}", off));
  T v{};
  for (std::size_t k = 0; k < sizeof(T); ++k)
    v = static_cast<T>(v | (static_cast<T>(b[off + k]) << (8 * k)));
  return v;
}

}  // namespace

std::vector<FatbinEntry> parse_fatbin(std::span<const std::uint8_t> bytes) {
  std::vector<FatbinEntry> out;
  std::size_t off = 0;
  // A file may hold several fatbins back to back (one per translation unit).
  while (off + 16 <= bytes.size()) {
    if (read_le<std::uint32_t>(bytes, off) != kMagic)
      throw std::runtime_error(fmt::format("no fatbin magic 0xBA55ED50 at offset {}", off));
    const auto header = read_le<std::uint16_t>(bytes, off + 6);
    const auto body = read_le<std::uint64_t>(bytes, off + 8);
    const std::size_t begin = off + header;
    if (header < 16 || body > bytes.size() || begin + body > bytes.size())
      throw std::runtime_error(fmt::format("fatbin at offset {} claims {} bytes, the file has {}",
                                           off, body, bytes.size()));
    const std::size_t end = begin + static_cast<std::size_t>(body);
    std::size_t e = begin;
    while (e < end) {
      FatbinEntry entry;
      const auto kind = read_le<std::uint16_t>(bytes, e);
      const auto entry_header = read_le<std::uint32_t>(bytes, e + 4);
      const auto payload = read_le<std::uint64_t>(bytes, e + 8);
      const auto compressed_size = read_le<std::uint32_t>(bytes, e + 16);
      entry.arch = static_cast<int>(read_le<std::uint32_t>(bytes, e + 28));
      if (kind != 1 && kind != 2)
        throw std::runtime_error(fmt::format("unknown entry kind {} at offset {}", kind, e));
      if (entry_header < 32 || payload > end || e + entry_header + payload > end)
        throw std::runtime_error(fmt::format("entry at offset {} overruns its fatbin", e));
      entry.kind = kind == 2 ? FatbinEntry::Kind::kElf : FatbinEntry::Kind::kPtx;
      entry.payload_bytes = payload;
      entry.compressed = compressed_size != 0;
      const std::size_t p = e + entry_header;
      if (!entry.compressed && payload >= 4) {
        if (entry.kind == FatbinEntry::Kind::kElf) {
          entry.payload_verified = std::memcmp(bytes.data() + p,
                                               "\x7f"
                                               "ELF",
                                               4) == 0;
        } else {
          // PTX text starts with a comment or a directive.
          entry.payload_verified = bytes[p] == '/' || bytes[p] == '.' || bytes[p] == '\n';
        }
        if (!entry.payload_verified)
          throw std::runtime_error(
              fmt::format("entry at offset {} does not hold the {} its header announces", e,
                          entry.kind == FatbinEntry::Kind::kElf ? "ELF" : "PTX"));
      }
      out.push_back(entry);
      e += entry_header + static_cast<std::size_t>(payload);
    }
    off = end;
  }
  if (out.empty()) throw std::runtime_error("no fatbin entries (empty or not a fatbin)");
  return out;
}

std::string describe(const FatbinEntry& e) {
  const bool elf = e.kind == FatbinEntry::Kind::kElf;
  return fmt::format("{}_{} {} ({}{} bytes)", elf ? "sm" : "compute", e.arch, elf ? "SASS" : "PTX",
                     e.compressed ? "compressed, " : (elf ? "ELF, " : "text, "), e.payload_bytes);
}

}  // namespace ptx_dissect
