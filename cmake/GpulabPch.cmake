# Precompiled headers for the headers most translation units parse: nlohmann/json (2.5 s of CPU
# to parse, in 215 of 708 files), GoogleTest (1.8 s, 250 files), fmt (0.7 s), CLI11 (2.6 s of
# its 9 s; the rest is code generated in every file that includes it, which no precompiled
# header saves) and the standard library. One precompiled header per set of compile flags,
# built once and reused by every target of that kind (REUSE_FROM):
#   gpulab_pch_lib      the labs' libraries          -fPIC  json + fmt + std
#   gpulab_pch_program  the labs' programs           -fPIE  CLI11 + json + fmt + std
#   gpulab_pch_test     the GoogleTest suites        -fPIE  gtest + json + fmt + std
#   gpulab_pch_bench    the Google Benchmark suites  -fPIE  benchmark + fmt + std
# GCC uses a .gch only when the flags that shape it match (-fPIC vs -fPIE, -g, the sanitizers,
# the macros the headers test), so the lists are per kind and every anchor target gets the
# tree-wide flags (sanitizers, warnings) its users get; CMake adds -Winvalid-pch, so a .gch GCC
# refused would be a warning (an error under GPULAB_WERROR), never a silent slow build.
# -pthread too, on every anchor and user: gRPC's targets add it to the device plugin's (it defines
# _REENTRANT, which glibc's headers test, and GCC refuses a .gch built with another value).
# C and CUDA sources are left out (the headers are C++; nvcc has no use for a GCC .gch).
# GPULAB_PCH (top CMakeLists.txt) turns them on; off by default until they are measured to pay
# (README "Build time": on the p08 subset they did not lower the CPU time of a cold build).

set(_GPULAB_PCH_STD
  <algorithm> <array> <chrono> <cmath> <cstddef> <cstdint> <cstdio> <cstdlib> <cstring>
  <filesystem> <fstream> <functional> <map> <memory> <optional> <set> <span> <sstream>
  <stdexcept> <string> <string_view> <thread> <unordered_map> <utility> <vector>)

# gpulab_add_pch_targets(): the anchor targets; called once, after the find_package() calls.
function(gpulab_add_pch_targets)
  if(NOT GPULAB_PCH)
    gpulab_feature("precompiled headers" OFF "GPULAB_PCH=OFF")
    return()
  endif()
  set(json nlohmann_json::nlohmann_json)
  _gpulab_pch_anchor(gpulab_pch_lib PIC "fmt::fmt;${json}" <nlohmann/json.hpp> <fmt/format.h>)
  _gpulab_pch_anchor(gpulab_pch_program PIE "fmt::fmt;${json};CLI11::CLI11"
                     <CLI/CLI.hpp> <nlohmann/json.hpp> <fmt/format.h>)
  set(kinds "libraries, programs")
  if(GPULAB_BUILD_TESTS)
    _gpulab_pch_anchor(gpulab_pch_test PIE "fmt::fmt;${json};GTest::gtest"
                       <gtest/gtest.h> <nlohmann/json.hpp> <fmt/format.h>)
    string(APPEND kinds ", tests")
  endif()
  if(GPULAB_BUILD_BENCH)
    _gpulab_pch_anchor(gpulab_pch_bench PIE "fmt::fmt;benchmark::benchmark"
                       <benchmark/benchmark.h> <fmt/format.h>)
    string(APPEND kinds ", benchmarks")
  endif()
  gpulab_feature("precompiled headers" ON "${kinds}")
endfunction()

# An OBJECT library whose only job is to compile one precompiled header; its object (of an
# empty file) is linked nowhere. pic: PIC (libraries) or PIE (executables), as its users.
function(_gpulab_pch_anchor target pic deps)
  add_library(${target} OBJECT ${PROJECT_SOURCE_DIR}/cmake/pch_anchor.cpp)
  target_link_libraries(${target} PRIVATE ${deps})
  if(pic STREQUAL "PIE")
    # An OBJECT library would get -fPIC; the executables it serves get -fPIE.
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE OFF)
    target_compile_options(${target} PRIVATE -fPIE)
  endif()
  gpulab_set_warnings(${target})
  target_compile_options(${target} PRIVATE -pthread)
  target_precompile_headers(${target} PRIVATE ${ARGN} ${_GPULAB_PCH_STD})
endfunction()

# gpulab_use_pch(<target> lib|program|test|bench): compile the target's C++ sources with the
# precompiled header of its kind. A no-op with GPULAB_PCH=OFF or for a kind not built. Decided
# at the end of the calling directory, so that options the lab's CMakeLists.txt adds after
# gpulab_add_lab() are seen: a source (or target) with its own -O level keeps its headers
# (membench's -O3 files in a -O0 sanitizer build lack __NO_INLINE__, and GCC refuses the .gch).
function(gpulab_use_pch target kind)
  if(NOT GPULAB_PCH OR NOT TARGET gpulab_pch_${kind})
    return()
  endif()
  # EVAL: a deferred call reads its arguments' variables when it runs, not now.
  cmake_language(EVAL CODE "cmake_language(DEFER CALL _gpulab_use_pch_now [[${target}]] ${kind})")
endfunction()

function(_gpulab_use_pch_now target kind)
  get_target_property(options ${target} COMPILE_OPTIONS)
  if(options MATCHES "(^|;)-O")
    return()
  endif()
  get_target_property(sources ${target} SOURCES)
  foreach(src IN LISTS sources)
    get_source_file_property(options ${src} TARGET_DIRECTORY ${target} COMPILE_OPTIONS)
    # .c and .cu get no C++ precompiled header.
    if(NOT src MATCHES "\\.(cpp|cc|cxx)$" OR options MATCHES "(^|;)-O")
      set_source_files_properties(${src} TARGET_DIRECTORY ${target}
        PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    endif()
  endforeach()
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-pthread>)
  target_precompile_headers(${target} REUSE_FROM gpulab_pch_${kind})
endfunction()
