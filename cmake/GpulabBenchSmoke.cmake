# The bench smoke test (label bench): runs one Google Benchmark program very briefly and fails
# when any benchmark reported an error. Google Benchmark 1.7 exits 0 even after
# state.SkipWithError() (a failed correctness check), so the exit status alone proves nothing;
# this reads its JSON instead.
#
#   cmake -DBENCH=/path/to/bench-x [-DARGS="--benchmark_filter=..."] -P GpulabBenchSmoke.cmake
#
# A benchmark whose error message starts with "SKIPPED" cannot run on this machine (no FUSE,
# library missing): it is listed, not failed. When every benchmark skipped, the script prints
# "gpulab-bench-smoke: SKIPPED: ..." (the test's SKIP_REGULAR_EXPRESSION).
if(NOT BENCH)
  message(FATAL_ERROR "usage: cmake -DBENCH=bench-program [-DARGS=...] -P GpulabBenchSmoke.cmake")
endif()
separate_arguments(extra UNIX_COMMAND "${ARGS}")
execute_process(
  COMMAND ${BENCH} --benchmark_min_time=0.001 --benchmark_format=json ${extra}
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${BENCH} exited ${rc}\n${err}")
endif()
string(JSON n ERROR_VARIABLE json_error LENGTH "${out}" benchmarks)
if(json_error)
  message(FATAL_ERROR "${BENCH}: no JSON benchmark list on stdout (${json_error}); "
                      "a benchmark must print to stderr, not stdout\n--- stdout ---\n${out}")
endif()
if(n EQUAL 0)
  message(FATAL_ERROR "${BENCH}: ran no benchmark")
endif()
math(EXPR last "${n} - 1")
set(errors "")
set(skips "")
set(ran 0)
foreach(i RANGE ${last})
  string(JSON name GET "${out}" benchmarks ${i} name)
  string(JSON occurred ERROR_VARIABLE no_field GET "${out}" benchmarks ${i} error_occurred)
  if(no_field OR NOT occurred)
    math(EXPR ran "${ran} + 1")
    continue()
  endif()
  string(JSON why ERROR_VARIABLE no_message GET "${out}" benchmarks ${i} error_message)
  if(why MATCHES "^SKIPPED")
    string(APPEND skips "  ${name}: ${why}\n")
  else()
    string(APPEND errors "  ${name}: ${why}\n")
  endif()
endforeach()
if(errors)
  message(FATAL_ERROR "${BENCH}: benchmarks reported errors (SkipWithError):\n${errors}")
endif()
if(skips)
  message(STATUS "benchmarks that cannot run here:\n${skips}")
endif()
if(ran EQUAL 0)
  message(STATUS "gpulab-bench-smoke: SKIPPED: every benchmark of ${BENCH} skipped")
else()
  message(STATUS "${ran} of ${n} benchmarks ran without an error")
endif()
