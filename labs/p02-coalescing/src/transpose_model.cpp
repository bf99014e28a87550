#include "coalescing/transpose_model.hpp"

#include "coalescing/bank_model.hpp"
#include "coalescing/sector_model.hpp"

namespace coalescing {

std::vector<TransposeModel> transpose_models(int n) {
  const auto row = strided_access(1).sectors;  // a warp along a row: 4
  const auto column = strided_access(static_cast<std::uint64_t>(n)).sectors;  // down a column: 32
  const int stage = conflict_degree(tile_row_addresses(32, 0));  // tile[ty][tx] store: 1
  const int plain = transpose_read_conflict(32);                 // tile[tx][ty] load: 32
  const int padded = transpose_read_conflict(33);                // with [32][33]: 1
  return {
      {Transpose::kCopy, "copy", row, row, 0, 0},
      {Transpose::kNaive, "naive", row, column, 0, 0},
      {Transpose::kTiled, "tiled", row, row, stage, plain},
      {Transpose::kPadded, "tiled+pad", row, row, stage, padded},
      {Transpose::kPaddedCpAsync, "tiled+pad cp.async", row, row, stage, padded},
      {Transpose::kPaddedBounds1024, "tiled+pad lb(1024,1)", row, row, stage, padded},
  };
}

}  // namespace coalescing
