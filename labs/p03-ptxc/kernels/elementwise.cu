// The CUDA equivalents of kernels/elementwise.ptxc. extern "C" keeps the entry
// names unmangled so the interpreter can match them with ptxc's.
// nvcc -O3 -ptx -arch=sm_80 elementwise.cu -o nvcc13-sm80-O3.ptx
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void scale2(const float* a, const float* b, float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] * 2.0f + b[i];
}

extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
