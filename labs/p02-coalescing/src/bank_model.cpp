#include "coalescing/bank_model.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace coalescing {

int bank_of(std::uint64_t byte_address) {
  return static_cast<int>((byte_address / kBankWordBytes) % kBanks);
}

int conflict_degree(std::span<const std::uint64_t> byte_addresses) {
  std::array<std::vector<std::uint64_t>, kBanks> words;
  for (std::uint64_t a : byte_addresses) {
    auto& w = words[static_cast<std::size_t>(bank_of(a))];
    const std::uint64_t word = a / kBankWordBytes;
    if (std::find(w.begin(), w.end(), word) == w.end()) w.push_back(word);  // same word: broadcast
  }
  std::size_t worst = 0;
  for (const auto& w : words) worst = std::max(worst, w.size());
  return static_cast<int>(worst);
}

std::vector<std::uint64_t> tile_column_addresses(int row_pitch, int column) {
  if (row_pitch <= 0 || column < 0 || column >= row_pitch)
    throw std::invalid_argument("tile_column_addresses");
  std::vector<std::uint64_t> a;
  for (int lane = 0; lane < 32; ++lane)
    a.push_back(static_cast<std::uint64_t>(lane * row_pitch + column) * kBankWordBytes);
  return a;
}

std::vector<std::uint64_t> tile_row_addresses(int row_pitch, int row) {
  if (row_pitch < 32 || row < 0) throw std::invalid_argument("tile_row_addresses");
  std::vector<std::uint64_t> a;
  for (int lane = 0; lane < 32; ++lane)
    a.push_back(static_cast<std::uint64_t>(row * row_pitch + lane) * kBankWordBytes);
  return a;
}

int transpose_read_conflict(int row_pitch) {
  // The worst column of the tile decides the pass count of that instruction.
  int worst = 0;
  for (int c = 0; c < 32; ++c)
    worst = std::max(worst, conflict_degree(tile_column_addresses(row_pitch, c)));
  return worst;
}

}  // namespace coalescing
