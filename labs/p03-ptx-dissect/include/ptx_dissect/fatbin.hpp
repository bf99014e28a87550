// Reads the table of contents of a CUDA fatbin (what `nvcc -fatbin` writes
// and what is embedded in a host object's .nv_fatbin section): which SASS
// (ELF cubins, one per sm_XX) and which PTX (compute_XX) it carries.
//
// The format is not documented by NVIDIA. The layout used here (a 16-byte
// header with magic 0xBA55ED50, then entries with a kind, a header size, a
// payload size and an arch) is the one the open-source tools that read
// fatbins agree on, and every field is cross-checked: the sizes must add up,
// an ELF payload must start with \x7fELF and a PTX payload with text, unless
// the entry is compressed.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ptx_dissect {

struct FatbinEntry {
  enum class Kind { kPtx, kElf };
  Kind kind = Kind::kElf;
  int arch = 0;  // 80 for sm_80 / compute_80
  std::uint64_t payload_bytes = 0;
  bool compressed = false;
  bool payload_verified = false;  // magic checked (impossible when compressed)
};

// Throws std::runtime_error naming the offset of the first inconsistency.
std::vector<FatbinEntry> parse_fatbin(std::span<const std::uint8_t> bytes);

// "sm_80 SASS (ELF, 29608 bytes)" / "compute_90 PTX (compressed, 5208 bytes)".
std::string describe(const FatbinEntry& e);

}  // namespace ptx_dissect
