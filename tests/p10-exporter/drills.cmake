# The SLO pack's promtool checks and the failure-drill tests' build wiring.
# tests/p10-exporter/tests.cmake includes this after gpulab_add_lab(exporter ...) made the tests.
#
#   slo.check-rules          promtool check rules on every rule file
#   slo.test-rules.<file>    promtool test rules, one ctest per test file (they run in parallel)
#   exporter.Drill*          GoogleTest cases in slo_drills_integration_test.cpp, which the lab's
#                            test glob already puts into test-exporter-integration; below it is
#                            made to depend on the lab programs the drills run.
# Without promtool every one of them is skipped (exit 77 / GTEST_SKIP) with the reason.
if(NOT GPULAB_BUILD_TESTS)
  return()
endif()

set(_slo_dir ${PROJECT_SOURCE_DIR}/labs/p10-exporter/slo)
set(_slo_runner ${CMAKE_CURRENT_LIST_DIR}/slo_promtool.sh)
file(GLOB _slo_rules CONFIGURE_DEPENDS ${_slo_dir}/rules/*.yml)
file(GLOB _slo_tests CONFIGURE_DEPENDS ${_slo_dir}/tests/*.test.yml)

add_test(NAME slo.check-rules COMMAND sh ${_slo_runner} check ${_slo_rules})
set_tests_properties(slo.check-rules PROPERTIES LABELS unit SKIP_RETURN_CODE 77
                     FAIL_REGULAR_EXPRESSION "FAILED")
foreach(_t IN LISTS _slo_tests)
  get_filename_component(_n ${_t} NAME_WE)
  add_test(NAME slo.test-rules.${_n} COMMAND sh ${_slo_runner} test ${_t})
  set_tests_properties(slo.test-rules.${_n} PROPERTIES LABELS unit SKIP_RETURN_CODE 77)
endforeach()

# The driver-skew drill's stand-in libnvidia-ml (nvmlInit_v2 answers "Driver/library version mismatch").
add_library(gpulab-drill-nvml SHARED ${CMAKE_CURRENT_LIST_DIR}/drill_fake_nvml.c)
set_target_properties(gpulab-drill-nvml PROPERTIES C_VISIBILITY_PRESET default)

# The drills run these labs' programs; a lab left out of GPULAB_LABS makes its drill skip.
if(TARGET test-exporter-integration)
  add_dependencies(test-exporter-integration gpulab-drill-nvml)
  target_compile_definitions(test-exporter-integration PRIVATE
    GPULAB_DRILL_NVML="$<TARGET_FILE:gpulab-drill-nvml>")
  foreach(_prog ring-allreduce caching-alloc paged-kv batching-sim hal-demo)
    if(TARGET ${_prog})
      add_dependencies(test-exporter-integration ${_prog})
    endif()
  endforeach()
endif()
