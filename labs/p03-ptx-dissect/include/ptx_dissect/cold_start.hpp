// The cold-start incident and its three fixes. A GPU generation newer than
// every cubin in the images joins the fleet; the driver JIT-compiles the
// embedded PTX for every kernel of every module at load, in every process
// with a cold cache, and services take minutes to start. The fixes:
//   1. add the new architectures to the build matrix (SASS for them ships);
//   2. pre-warm the JIT cache in the image (the compile moves to image build);
//   3. CUDA_MODULE_LOADING=LAZY (each kernel is compiled at its first launch,
//      not all of them at module load).
// Each row says what the load decision becomes on each GPU that JITs today,
// and what the fix costs, with the fatbin sizes of a real build.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpulab/json.hpp"
#include "ptx_dissect/load_decision.hpp"

namespace ptx_dissect {

struct ColdStartInputs {
  FatbinManifest shipped;          // what the images carry today
  std::uint64_t shipped_bytes = 0;
  FatbinManifest with_new_arches;  // fix 1: the same build with the new sm_XX added
  std::uint64_t with_new_arches_bytes = 0;
  int kernels = 0;                 // entries in the module (each one a JIT compile)
};

struct ColdStartRow {
  std::string fix;
  std::vector<std::string> at_load;  // one per GPU in ColdStartTable::gpus
  std::string cost;
};

struct ColdStartTable {
  std::vector<Gpu> gpus;  // the reference GPUs whose load is a JIT with the shipped fatbin
  std::vector<ColdStartRow> rows;
};

// Throws std::invalid_argument if no reference GPU JITs with the shipped fatbin
// (there is no incident to fix) or fix 1's fatbin does not cover them.
ColdStartTable cold_start_table(const ColdStartInputs& in);

std::string render(const ColdStartTable& table, const ColdStartInputs& in);
gpulab::Json to_json(const ColdStartTable& table);

}  // namespace ptx_dissect
