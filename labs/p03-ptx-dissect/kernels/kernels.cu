// The four kernels of the dissection (curriculum P03 Lab 01), plus `rolled`,
// the same loop as `unrolled` with unrolling forbidden, so the register-count
// change has a baseline. extern "C" keeps the PTX entry names readable.

// 1. saxpy: the kernel the answer key annotates line by line.
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// 2. guarded: a small if body, a candidate for if-conversion (predication / select).
extern "C" __global__ void guarded(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  if (v < 0.0f) v = -0.5f * v;
  y[i] = v;
}

// 3. unrolled: an inner loop with #pragma unroll 8 (8 bodies + a remainder).
extern "C" __global__ void unrolled(const float* x, float* y, int n, int m) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
#pragma unroll 8
  for (int k = 0; k < m; ++k) acc += x[(i + k) % n] * 0.5f;
  y[i] = acc;
}

extern "C" __global__ void rolled(const float* x, float* y, int n, int m) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
#pragma unroll 1
  for (int k = 0; k < m; ++k) acc += x[(i + k) % n] * 0.5f;
  y[i] = acc;
}

// 4. spiller: 64 live floats per thread. Indices are compile-time constants
// (full unroll), so the array lives in registers until -maxrregcount forces
// spills; a dynamically indexed array would sit in local memory regardless.
extern "C" __global__ void spiller(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float buf[64];
#pragma unroll
  for (int k = 0; k < 64; ++k) buf[k] = x[(i + k * 97) % n] * static_cast<float>(k + 1);
  float acc = 0.0f;
#pragma unroll
  for (int k = 0; k < 64; ++k) acc += buf[k] * buf[63 - k];
  y[i] = acc;
}
