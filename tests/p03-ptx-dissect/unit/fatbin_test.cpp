#include "ptx_dissect/fatbin.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace {

void put(std::vector<std::uint8_t>& b, std::size_t off, std::uint64_t v, int bytes) {
  for (int k = 0; k < bytes; ++k)
    b[off + static_cast<std::size_t>(k)] = static_cast<std::uint8_t>(v >> (8 * k));
}

// A fatbin laid out as nvcc 13 writes it: header, then entries of a 64-byte
// header and a payload.
std::vector<std::uint8_t> make_fatbin(
    const std::vector<std::pair<int, int>>& entries /* kind, arch */) {
  std::vector<std::uint8_t> b(16, 0);
  for (const auto& [kind, arch] : entries) {
    const std::size_t e = b.size();
    b.resize(e + 64 + 16, 0);
    put(b, e, static_cast<std::uint64_t>(kind), 2);
    put(b, e + 4, 64, 4);
    put(b, e + 8, 16, 8);
    put(b, e + 28, static_cast<std::uint64_t>(arch), 4);
    std::memcpy(b.data() + e + 64,
                kind == 2 ? "\x7f"
                            "ELF"
                          : "//\n.",
                4);
  }
  put(b, 0, 0xBA55ED50, 4);
  put(b, 4, 1, 2);
  put(b, 6, 16, 2);
  put(b, 8, b.size() - 16, 8);
  return b;
}

}  // namespace

TEST(Fatbin, ListsElfAndPtxEntriesWithTheirArchitectures) {
  const auto entries = ptx_dissect::parse_fatbin(make_fatbin({{2, 80}, {2, 90}, {1, 90}}));
  ASSERT_EQ(entries.size(), 3U);
  EXPECT_EQ(entries[0].kind, ptx_dissect::FatbinEntry::Kind::kElf);
  EXPECT_EQ(entries[1].arch, 90);
  EXPECT_EQ(entries[2].kind, ptx_dissect::FatbinEntry::Kind::kPtx);
  EXPECT_TRUE(entries[0].payload_verified);
  EXPECT_EQ(ptx_dissect::describe(entries[2]), "compute_90 PTX (text, 16 bytes)");
}

TEST(Fatbin, RejectsCorruptInputWithoutReadingPastTheEnd) {
  auto good = make_fatbin({{2, 80}});
  auto bad_magic = good;
  bad_magic[0] ^= 1;
  EXPECT_THROW(ptx_dissect::parse_fatbin(bad_magic), std::runtime_error);
  auto truncated = good;
  truncated.resize(good.size() - 5);
  EXPECT_THROW(ptx_dissect::parse_fatbin(truncated), std::runtime_error);
  auto not_elf = good;
  not_elf[16 + 64] = 'X';
  EXPECT_THROW(ptx_dissect::parse_fatbin(not_elf), std::runtime_error);
  auto huge = good;
  put(huge, 16 + 8, ~0ULL, 8);
  EXPECT_THROW(ptx_dissect::parse_fatbin(huge), std::runtime_error);
  EXPECT_THROW(ptx_dissect::parse_fatbin(std::vector<std::uint8_t>{}), std::runtime_error);
}
