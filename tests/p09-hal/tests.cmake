# Test-only wiring of p09-hal (included by gpulab_add_lab after the test targets exist).
# Test-only backends (tests/p09-hal/backends): one per rejection reason, the
# ABI-evolution pair, a lifecycle recorder, and a second copy of cpu_ref for the
# duplicate-name check. They land in lib/hal-test-backends.
set(_hal_test_src ${PROJECT_SOURCE_DIR}/tests/p09-hal/backends)
set(_hal_cases major3 tiny noname nodevice initfail nullmatmul nulldesc nosym nullattention)
set(_hal_case_number 1)
foreach(_case IN LISTS _hal_cases)
  gpulab_hal_backend(${_case} TEST SOURCES ${_hal_test_src}/broken.c)
  target_compile_definitions(hal-backend-${_case} PRIVATE GPULAB_TEST_CASE=${_hal_case_number})
  math(EXPR _hal_case_number "${_hal_case_number} + 1")
endforeach()
gpulab_hal_backend(old_minor TEST SOURCES ${_hal_test_src}/minor.c)
target_compile_definitions(hal-backend-old_minor PRIVATE GPULAB_TEST_MINOR=0)
gpulab_hal_backend(v21_minor TEST SOURCES ${_hal_test_src}/minor.c)
target_compile_definitions(hal-backend-v21_minor PRIVATE GPULAB_TEST_MINOR=1)
gpulab_hal_backend(new_minor TEST SOURCES ${_hal_test_src}/minor.c)
target_compile_definitions(hal-backend-new_minor PRIVATE GPULAB_TEST_MINOR=3)
foreach(_order order_a order_b)
  gpulab_hal_backend(${_order} TEST SOURCES ${_hal_test_src}/order.c)
  target_compile_definitions(hal-backend-${_order} PRIVATE ORDER_NAME="${_order}")
endforeach()
gpulab_hal_backend(cpu_ref_copy TEST SOURCES backends/cpu_ref/cpu_ref.c DEPS m)

set(_hal_test_defs
  GPULAB_HAL_TEST_BACKEND_DIR="${GPULAB_HAL_TEST_BACKEND_DIR}"
  GPULAB_HAL_C_COMPILER="${CMAKE_C_COMPILER}"
  GPULAB_HAL_INCLUDE_DIR="${CMAKE_CURRENT_SOURCE_DIR}/include")
foreach(_t test-hal test-hal-integration)
  if(TARGET ${_t})
    target_compile_definitions(${_t} PRIVATE ${_hal_test_defs})
  endif()
endforeach()

# gemm_edges_test.cpp tests three pieces of the fast backend directly: its
# choice of micro-kernel, its cache blocking and its worker pool (compiled into
# the test, not linked from the .so, which exports one symbol only).
if(TARGET test-hal)
  target_sources(test-hal PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/backends/fast/blocking.cpp
                                  ${CMAKE_CURRENT_SOURCE_DIR}/backends/fast/micro_kernel.cpp
                                  ${CMAKE_CURRENT_SOURCE_DIR}/backends/fast/worker_pool.cpp)
endif()
