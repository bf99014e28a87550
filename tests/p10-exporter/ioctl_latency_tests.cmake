# Test wiring of gpulab-ioctl-latency (included by labs/p10-exporter/ebpf/ebpf.cmake).
# The root test drives P04's fakegpud with the ioctls of its ABI header and runs the probe and
# gpu-exporter; a program that is not built makes the test skip, naming it.
if(NOT GPULAB_BUILD_TESTS)
  return()
endif()
foreach(_t test-exporter-root test-exporter-integration)
  if(NOT TARGET ${_t})
    continue()
  endif()
  target_include_directories(${_t} PRIVATE ${PROJECT_SOURCE_DIR}/labs/p04-fakegpu/abi)
  foreach(_prog gpulab-ioctl-latency fakegpud)
    if(TARGET ${_prog})
      add_dependencies(${_t} ${_prog})
    endif()
  endforeach()
endforeach()
