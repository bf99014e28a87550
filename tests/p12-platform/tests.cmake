# Test-only wiring of p12-platform (included by gpulab_add_lab after the test targets exist).
# The Slurm executor against a real Slurm: tests/p12-platform/slurm/ starts its own munged,
# slurmctld and slurmd (slurm_cluster.hpp). Root only (root_main.cpp exits 77 without it);
# each test skips with the reason when Slurm is not installed.
file(GLOB _platform_slurm_tests CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/p12-platform/slurm/*.cpp)
if(_platform_slurm_tests)
  add_executable(test-platform-slurm ${_platform_slurm_tests}
                 ${PROJECT_SOURCE_DIR}/tests/support/gpulab_test/root_main.cpp)
  target_link_libraries(test-platform-slurm PRIVATE gpulab::platform GTest::gtest)
  target_compile_definitions(test-platform-slurm PRIVATE
    GPULAB_LAB_DIR="${CMAKE_CURRENT_SOURCE_DIR}" GPULAB_BIN_DIR="${CMAKE_RUNTIME_OUTPUT_DIRECTORY}")
  target_include_directories(test-platform-slurm PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
  gpulab_set_warnings(test-platform-slurm)
  add_dependencies(test-platform-slurm gpulabd gpulabctl gpulab-task)
  # One process per suite: its cluster is started once (SetUpTestSuite) and
  # the tests share it, so each suite is one ctest test, not one per gtest case.
  # platform.slurm: one node on loopback; platform.slurm_multinode: two nodes
  # and slurmctld in network namespaces on a bridge.
  add_test(NAME platform.slurm COMMAND test-platform-slurm --gtest_filter=SlurmTest.*
           WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
  add_test(NAME platform.slurm_multinode COMMAND test-platform-slurm --gtest_filter=SlurmMultiNodeTest.*
           WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
  set_tests_properties(platform.slurm platform.slurm_multinode PROPERTIES
                       LABELS "slurm;root" SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()
