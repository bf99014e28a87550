# CUDA is optional: a lab with CUDA sources builds its device code only when a
# CUDA compiler is found. Running it still needs a GPU; each program checks for
# one at run time and exits 77 (skipped) without.
include(CheckLanguage)
check_language(CUDA)
if(CMAKE_CUDA_COMPILER)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    # Turing, Ampere, Hopper as machine code, plus Hopper PTX so newer GPUs JIT it.
    set(CMAKE_CUDA_ARCHITECTURES "75-real;80-real;90")
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit)
  set(GPULAB_HAVE_CUDA ON)
  gpulab_feature("CUDA device code" ON "nvcc ${CMAKE_CUDA_COMPILER_VERSION}, archs ${CMAKE_CUDA_ARCHITECTURES}")
else()
  set(GPULAB_HAVE_CUDA OFF)
  gpulab_feature("CUDA device code" OFF "no CUDA compiler found (install the CUDA Toolkit, put nvcc on PATH)")
endif()
