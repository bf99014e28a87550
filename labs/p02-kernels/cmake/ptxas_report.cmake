# Build-time register report: compiles the device code for one architecture
# with -Xptxas=-v and keeps what ptxas says, for `cuda-kernels ptxas`.
# Called as: cmake -DNVCC=... -DARCH=sm_90 -DSRC=... -DINCLUDE=... -DCOMMON_CUDA_INCLUDE=... -DOUT=... -P ptxas_report.cmake
execute_process(
  COMMAND ${NVCC} -std=c++17 -O3 -arch=${ARCH} -cubin -Xptxas=-v -I${INCLUDE} -I${COMMON_CUDA_INCLUDE} -o ${OUT}.cubin ${SRC}
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ptxas report: nvcc failed (${rc}):\n${err}")
endif()
file(REMOVE ${OUT}.cubin)
file(WRITE ${OUT} "${out}${err}")
