// Strided reads: touch every s-th float of an array much larger than the
// last-level cache. Useful bandwidth falls as 1/s until one element per
// 64-byte line (s = 16 floats); past that each load costs a whole line,
// which is the CPU form of the GPU coalescing argument.
#pragma once

#include <cstddef>
#include <vector>

namespace membench {

struct StridePoint {
  std::size_t stride = 1;    // in elements (4-byte floats)
  double effective_gbs = 0;  // bytes the program asked for / time
  double line_gbs = 0;       // 64-byte lines brought in / time
  std::size_t loads = 0;     // elements read per pass
  std::size_t lines = 0;     // distinct cache lines touched per pass
};

// Distinct 64-byte lines a pass over n floats with this stride touches.
std::size_t lines_touched(std::size_t n, std::size_t stride);

// Strides 1, 2, 4, ... max_stride over an array of n floats, best of reps.
std::vector<StridePoint> stride_sweep(std::size_t n, std::size_t max_stride, int reps);

}  // namespace membench
