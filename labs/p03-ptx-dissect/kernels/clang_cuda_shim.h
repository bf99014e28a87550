// What clang needs to compile kernels.cu for the GPU without NVIDIA's headers
// (-nocudainc: clang 14 knows CUDA only up to 11.5 and rejects newer headers).
// __global__ is the attribute nvcc's host_defines.h spells the same way;
// threadIdx/blockIdx/blockDim come from clang's own builtin-variable header.
#pragma once
#define __global__ __attribute__((global))
#include <__clang_cuda_builtin_vars.h>
