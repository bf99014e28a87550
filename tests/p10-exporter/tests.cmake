# Test-only wiring of p10-exporter (included by gpulab_add_lab after the test targets exist).

# The SLO pack's promtool checks and the failure-drill tests (labs/p10-exporter/slo, docs/runbooks).
include(${CMAKE_CURRENT_LIST_DIR}/drills.cmake)

# A stand-in libnvidia-ml with fixed readings and one Xid event, so the NVML
# source's success path is tested on machines without a GPU.
add_library(gpulab-exporter-fake-nvml SHARED ${CMAKE_CURRENT_LIST_DIR}/fake_nvml.c)
set_target_properties(gpulab-exporter-fake-nvml PROPERTIES C_VISIBILITY_PRESET default)
foreach(_t test-exporter test-exporter-integration)
  if(TARGET ${_t})
    add_dependencies(${_t} gpulab-exporter-fake-nvml)
    target_compile_definitions(${_t} PRIVATE GPULAB_FAKE_NVML="$<TARGET_FILE:gpulab-exporter-fake-nvml>")
  endif()
endforeach()
