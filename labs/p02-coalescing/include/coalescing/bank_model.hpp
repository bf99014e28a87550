// Shared-memory banks as arithmetic: 32 banks, 4 bytes wide, word-interleaved.
// A warp's access is split into as many passes as the most-loaded bank has
// distinct words (lanes reading the same word share it by broadcast).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace coalescing {

inline constexpr int kBanks = 32;
inline constexpr std::uint64_t kBankWordBytes = 4;

int bank_of(std::uint64_t byte_address);

// 1 = conflict-free, 32 = fully serialised.
int conflict_degree(std::span<const std::uint64_t> byte_addresses);

// Byte addresses when lane l reads float tile[row(l)][col(l)] of a tile with
// `row_pitch` floats per row. Column access: row = l, col = c. Row access: row = r, col = l.
std::vector<std::uint64_t> tile_column_addresses(int row_pitch, int column);
std::vector<std::uint64_t> tile_row_addresses(int row_pitch, int row);

// The transpose's shared-memory read, tile[threadIdx.x][threadIdx.y + j]: a column per warp.
// 32 for a [32][32] tile, 1 for [32][33].
int transpose_read_conflict(int row_pitch);

}  // namespace coalescing
