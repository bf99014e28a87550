// Cache blocking of the fast backend's GEMM (the GotoBLAS/BLIS loop nest):
//   nc columns of B are packed once per kc slice (the B panel, kept in L3),
//   mc rows of A per kc slice (the A block, kept in L2),
//   and the micro-kernel streams one kc x NR sliver of B from L1 against the
//   MR-row slivers of the A block.
// The sizes come from this CPU's caches, read at run time.
#pragma once

#include <cstdint>

#include "micro_kernel.hpp"

namespace fast_backend {

struct Blocking {
  std::uint64_t kc, mc, nc;
};

struct CacheSizes {
  std::uint64_t l1d, l2, l3;  // bytes; 0 when unknown
};

// sysconf(_SC_LEVEL{1_DCACHE,2_CACHE,3_CACHE}_SIZE), which glibc answers from
// CPUID on x86.
CacheSizes this_cpu_caches();

// For the micro-kernel's tile (MR x NR):
// kc: the B sliver (kc x NR floats) takes half of L1d, leaving the rest for the
//     A sliver and the C tile;
// mc: the A block (mc x kc floats, a multiple of MR) takes half of L2, leaving
//     room for the B sliver passing through and C;
// nc: the B panel (kc x nc floats) takes at most a quarter of L3 (shared with
//     the other core and other programs).
// Each is clamped to a sane range, and unknown sizes (0) fall back to a
// 32 KiB / 512 KiB / 8 MiB cache, so a VM that hides its caches still blocks.
Blocking blocking_for(const CacheSizes& caches, const Tile& tile);

}  // namespace fast_backend
