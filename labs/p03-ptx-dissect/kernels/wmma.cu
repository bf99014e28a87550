// The wmma extension: one 16x16x16 tile product on the tensor cores through the
// warp-level wmma API (half inputs, float accumulator). Built for sm_80, it is
// `wmma.mma.sync` in PTX and HMMA in SASS. One warp computes C = A*B + C.
#include <mma.h>

using namespace nvcuda;

extern "C" __global__ void wmma16(const half* a, const half* b, float* c) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::load_matrix_sync(fa, a, 16);
  wmma::load_matrix_sync(fb, b, 16);
  wmma::load_matrix_sync(acc, c, 16, wmma::mem_row_major);
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(c, acc, 16, wmma::mem_row_major);
}
