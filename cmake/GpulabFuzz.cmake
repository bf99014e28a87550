# libFuzzer targets (ctest label fuzz). Every fuzz target compiles with these flags:
# ASan + UBSan, and -fno-sanitize-recover=all so undefined behaviour (a signed overflow, a
# misaligned load) aborts the run and fails the test instead of printing and going on.
# tests/fuzz-selftest/ proves it on a target that overflows.
set(GPULAB_FUZZ_FLAGS -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all)

# libFuzzer needs clang. When the project is built with GCC, a clang found on PATH builds the
# fuzz targets from the few sources each needs. Not under the sanitizer presets: the fuzz
# targets carry ASan+UBSan themselves and already run in the default suite.
find_program(GPULAB_FUZZ_CXX NAMES clang++ clang++-19 clang++-16 clang++-15 clang++-14)
set(GPULAB_FUZZ_AVAILABLE OFF)
set(GPULAB_FUZZ_WHY_NOT "clang++ with libFuzzer not found")
if(GPULAB_SANITIZE)
  set(GPULAB_FUZZ_WHY_NOT "not under a sanitizer preset (the targets carry ASan+UBSan themselves)")
elseif(NOT GPULAB_BUILD_TESTS)
  set(GPULAB_FUZZ_WHY_NOT "GPULAB_BUILD_TESTS=OFF")
elseif(GPULAB_FUZZ_CXX)
  set(_probe ${PROJECT_BINARY_DIR}/CMakeFiles/gpulab-fuzz-probe)
  file(WRITE ${_probe}.cpp "#include <cstdint>\n#include <cstddef>\n"
       "extern \"C\" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }\n")
  execute_process(COMMAND ${GPULAB_FUZZ_CXX} -fsanitize=fuzzer ${_probe}.cpp -o ${_probe}
                  RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
  if(_rc EQUAL 0)
    set(GPULAB_FUZZ_AVAILABLE ON)
  else()
    set(GPULAB_FUZZ_WHY_NOT "${GPULAB_FUZZ_CXX} cannot link -fsanitize=fuzzer")
  endif()
endif()

# gpulab_add_fuzzer(fuzz-license-parser          # the program, in bin/
#   SOURCES fuzz/license_parser_fuzz.cpp src/...  # the entry point and what it needs (relative
#                                                 # to the lab folder, or absolute)
#   LIBS    fmt crypto                           # linked as -l<name>
#   COMPILE_OPTIONS -ffp-contract=off
#   TEST    licensing.fuzz-parser                 # a bounded ctest run (label fuzz) ...
#   ARGS    -max_total_time=5 -seed=1             # ... with these libFuzzer options,
#   SEEDS   ${PROJECT_SOURCE_DIR}/tests/...)      # reading the checked-in seeds; new inputs
#                                                 # go to a corpus in the build tree
# Does nothing when GPULAB_FUZZ_AVAILABLE is OFF (the caller reports why).
function(gpulab_add_fuzzer exe)
  cmake_parse_arguments(PARSE_ARGV 1 FZ "" "TEST;SEEDS;TIMEOUT" "SOURCES;LIBS;ARGS;COMPILE_OPTIONS")
  if(NOT GPULAB_FUZZ_AVAILABLE)
    return()
  endif()
  set(sources "")
  foreach(src IN LISTS FZ_SOURCES)
    if(NOT IS_ABSOLUTE ${src})
      set(src ${CMAKE_CURRENT_SOURCE_DIR}/${src})
    endif()
    list(APPEND sources ${src})
  endforeach()
  set(libs "")
  foreach(lib IN LISTS FZ_LIBS)
    list(APPEND libs -l${lib})
  endforeach()
  get_target_property(fmt_inc fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
  get_target_property(cli_inc CLI11::CLI11 INTERFACE_INCLUDE_DIRECTORIES)
  set(bin ${CMAKE_RUNTIME_OUTPUT_DIRECTORY}/${exe})
  add_custom_command(OUTPUT ${bin}
    COMMAND ${GPULAB_FUZZ_CXX} -std=c++20 -O1 -g ${FZ_COMPILE_OPTIONS} ${GPULAB_FUZZ_FLAGS}
            -I${CMAKE_CURRENT_SOURCE_DIR}/include -I${PROJECT_SOURCE_DIR}/common/include
            "$<$<BOOL:${fmt_inc}>:-I$<JOIN:${fmt_inc},;-I>>" "$<$<BOOL:${cli_inc}>:-I$<JOIN:${cli_inc},;-I>>"
            ${sources} -o ${bin} ${libs}
    DEPENDS ${sources}
    COMMAND_EXPAND_LISTS
    COMMENT "libFuzzer target ${exe} (${GPULAB_FUZZ_CXX})")
  add_custom_target(${exe}-build ALL DEPENDS ${bin})
  if(FZ_TEST)
    set(corpus ${CMAKE_CURRENT_BINARY_DIR}/${exe}-corpus)
    string(JOIN " " args ${FZ_ARGS})
    add_test(NAME ${FZ_TEST}
      COMMAND sh -c "mkdir -p '${corpus}' && exec '${bin}' ${args} '${corpus}' '${FZ_SEEDS}'")
    if(NOT FZ_TIMEOUT)
      set(FZ_TIMEOUT 120)
    endif()
    set_tests_properties(${FZ_TEST} PROPERTIES LABELS fuzz TIMEOUT ${FZ_TIMEOUT})
  endif()
endfunction()
