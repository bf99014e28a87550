// What each rung of the transpose ladder costs in global sectors and
// shared-memory passes per warp instruction, from the sector and bank models.
#pragma once

#include <string_view>
#include <vector>

#include "coalescing/device.hpp"

namespace coalescing {

struct TransposeModel {
  Transpose kind;
  std::string_view name;
  std::size_t load_sectors = 0;   // per warp global load
  std::size_t store_sectors = 0;  // per warp global store
  int smem_store_conflict = 0;    // 0: no shared memory
  int smem_load_conflict = 0;
  // DRAM-sector prediction: copy moves 4 + 4 sectors per 32 floats; this kernel
  // load + store. Shared-memory conflicts are invisible to this number.
  [[nodiscard]] double fraction_of_copy() const {
    return 8.0 / static_cast<double>(load_sectors + store_sectors);
  }
};

// Every rung in the order the program runs them, for an n x n matrix.
std::vector<TransposeModel> transpose_models(int n);

}  // namespace coalescing
