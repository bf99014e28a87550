# gpulab_add_lab(): one call turns a lab folder into
#   gpulab_<name> / gpulab::<name>  the library (include/ is its public header dir)
#   one executable per PROGRAMS entry ("prog" uses main.cpp, "prog:path.cpp" another file)
#   The folder a test file sits in is its ctest label (tests/<folder>/<label>/*.cpp):
#   test-<name>          GoogleTest suite from tests/<folder>/unit/*.cpp        (label: unit)
#   test-<name>-integration  from tests/<folder>/integration/*.cpp          (label: integration)
#   test-<name>-root     from tests/<folder>/root/*.cpp, needs root; exits 77 (skipped) without
#                        (labels: root, integration). A root/ with its own main.cpp is wired
#                        by the lab itself (p04-mininer).
#                        Other label folders (toolchain/, slurm/) hold tests that need more than
#                        a GoogleTest binary; the lab or its tests.cmake wires them.
#                        tests/<folder>/ itself keeps the headers, fixtures and tests.cmake the
#                        suites share (it is on their include path).
#   <name>.readme        the README expected-output check             (label: readme)
#   bench-<name>         Google Benchmark suite from bench/<folder>/*.cpp, smoke-run (label: bench)
#   tests/<folder>/tests.cmake, when it exists, is included after the tests are defined: the
#                        test-only wiring of the lab (fake libraries, schemas, test backends)
#
#   gpulab_add_lab(simt
#     SUMMARY  "one line for `tools/lab list`"
#     PROGRAMS simt-sim
#     SOURCES  src/assembler.cpp src/warp.cpp
#     LABS     p05-caching-allocator  # labs this one builds on: their libraries are linked,
#                                     # they are configured first (cmake/GpulabLabOrder.cmake),
#                                     # and if one could not be configured this lab is skipped
#                                     # with the reason. Keep the keyword on its own line.
#     DEPS     Threads::Threads
#     NEEDS    cuda-gpu          # what running needs: cuda-gpu, root (tools/lab list checks)
#     TEST_ENV "NAME=value"
#     CUDA_SOURCES src/device.cu          # built when nvcc (and every CUDA_DEPS target) is found,
#     CUDA_DEPS    CUDA::cudart CUDA::cublas  # as C++17 with the shared runtime; the lab then
#     STUB_SOURCES src/device_unavailable.cpp  # defines <NAME>_HAVE_CUDA (compile definition
#                                          # and CMake variable); without, the stubs (exit 77)
#     STATIC_PROGRAMS fakegpu-client-static:client_main.cpp  # statically linked copies, for a
#     STATIC_DEPS  CLI11::CLI11 Threads::Threads  # bare rootfs or an initramfs: SOURCES built
#                  # again as gpulab_<name>_static, without gpulab::common's library (Debian's fmt
#                  # has no static archive; common's headers are there), each program linked
#                  # -static with STATIC_DEPS. Not built under sanitizers (their runtimes do not
#                  # link statically). Not in the lab index (helpers found beside a program at
#                  # run time); the lab's tests depend on them.
#     )
#
# A macro, so that a lab whose prerequisite labs are missing returns from its
# own CMakeLists.txt (what follows the call there wires targets that would not exist).
set(_GPULAB_LAB_LISTS "PROGRAMS;SOURCES;LABS;DEPS;NEEDS;TEST_ENV;CUDA_SOURCES;CUDA_DEPS;STUB_SOURCES;STATIC_PROGRAMS;STATIC_DEPS")
macro(gpulab_add_lab name)
  _gpulab_unmet_labs(_gpulab_unmet ${ARGN})
  if(_gpulab_unmet)
    get_filename_component(_gpulab_folder ${CMAKE_CURRENT_SOURCE_DIR} NAME)
    gpulab_feature("lab ${_gpulab_folder}" OFF "needs ${_gpulab_unmet}")
    return()
  endif()
  _gpulab_add_lab(${name} ${ARGN})
endmacro()

# The LABS of a gpulab_add_lab() call that did not configure, in words ("lab p07-paged-kv (needs
# libxxhash-dev)"); empty when all did.
function(_gpulab_unmet_labs out)
  cmake_parse_arguments(PARSE_ARGV 1 LAB "" "SUMMARY" "${_GPULAB_LAB_LISTS}")
  set(unmet "")
  foreach(folder IN LISTS LAB_LABS)
    get_property(lib GLOBAL PROPERTY GPULAB_LAB_${folder}_LIBRARY)
    if(NOT lib)
      list(APPEND unmet "lab ${folder}")
    endif()
  endforeach()
  string(REPLACE ";" ", " unmet "${unmet}")
  set(${out} "${unmet}" PARENT_SCOPE)
endfunction()

function(_gpulab_add_lab name)
  cmake_parse_arguments(PARSE_ARGV 1 LAB "" "SUMMARY" "${_GPULAB_LAB_LISTS}")
  get_filename_component(folder ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  set(lib gpulab_${name})
  string(TOUPPER "${name}_HAVE_CUDA" have_cuda)
  set(${have_cuda} OFF)
  if(LAB_CUDA_SOURCES OR LAB_STUB_SOURCES)
    set(missing "")
    if(NOT GPULAB_HAVE_CUDA)
      set(missing "no CUDA compiler")
    endif()
    foreach(dep IN LISTS LAB_CUDA_DEPS)
      if(NOT missing AND NOT TARGET ${dep})
        set(missing "${dep} not found in the CUDA Toolkit")
      endif()
    endforeach()
    if(missing)
      list(APPEND LAB_SOURCES ${LAB_STUB_SOURCES})
      gpulab_feature("${folder} CUDA device code" OFF "${missing}: the programs build, and exit 77")
    else()
      set(${have_cuda} ON)
      list(APPEND LAB_SOURCES ${LAB_CUDA_SOURCES})
      list(APPEND LAB_DEPS ${LAB_CUDA_DEPS})
      gpulab_feature("${folder} CUDA device code" ON "nvcc ${CMAKE_CUDA_COMPILER_VERSION}")
    endif()
  endif()
  set(${have_cuda} ${${have_cuda}} PARENT_SCOPE)
  foreach(prerequisite IN LISTS LAB_LABS)
    get_property(prerequisite_lib GLOBAL PROPERTY GPULAB_LAB_${prerequisite}_LIBRARY)
    list(APPEND LAB_DEPS ${prerequisite_lib})
  endforeach()

  # The library: all the lab's logic. Tests and benches link this, never the program.
  if(LAB_SOURCES)
    add_library(${lib} STATIC ${LAB_SOURCES})
    target_include_directories(${lib} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
    target_link_libraries(${lib} PUBLIC gpulab::common ${LAB_DEPS})
    gpulab_set_warnings(${lib})
    gpulab_use_pch(${lib} lib)
    if(${have_cuda})
      # nvcc gets C++17 (CMake 3.25 cannot spell C++20 for it), so the headers the .cu files
      # include stay C++17; the shared runtime once (the static default would be linked a second
      # time through CUDA::cudart); line info for Nsight's source view.
      set_target_properties(${lib} PROPERTIES
        CUDA_RUNTIME_LIBRARY Shared CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON)
      target_compile_options(${lib} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo -Xcompiler=-Wall,-Wextra>)
      target_compile_definitions(${lib} PUBLIC ${have_cuda}=1)
    endif()
  else()
    add_library(${lib} INTERFACE)
    target_include_directories(${lib} INTERFACE ${CMAKE_CURRENT_SOURCE_DIR}/include)
    target_link_libraries(${lib} INTERFACE gpulab::common ${LAB_DEPS})
  endif()
  add_library(gpulab::${name} ALIAS ${lib})

  set(program_names "")
  foreach(spec IN LISTS LAB_PROGRAMS)
    _gpulab_program_spec("${spec}" prog main_src)
    add_executable(${prog} ${main_src})
    target_link_libraries(${prog} PRIVATE ${lib})
    gpulab_set_warnings(${prog})
    gpulab_use_pch(${prog} program)
    list(APPEND program_names ${prog})
  endforeach()

  set(static_programs "")
  if(LAB_STATIC_PROGRAMS AND NOT GPULAB_SANITIZE)
    add_library(${lib}_static STATIC ${LAB_SOURCES})
    target_include_directories(${lib}_static PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include)
    target_include_directories(${lib}_static PRIVATE ${PROJECT_SOURCE_DIR}/common/include)
    target_link_libraries(${lib}_static PUBLIC ${LAB_STATIC_DEPS})
    gpulab_set_warnings(${lib}_static)
    foreach(spec IN LISTS LAB_STATIC_PROGRAMS)
      _gpulab_program_spec("${spec}" prog main_src)
      add_executable(${prog} ${main_src})
      target_link_libraries(${prog} PRIVATE ${lib}_static)
      target_link_options(${prog} PRIVATE -static)
      gpulab_set_warnings(${prog})
      list(APPEND static_programs ${prog})
    endforeach()
  endif()

  if(GPULAB_BUILD_TESTS)
    _gpulab_add_lab_tests(${name} ${folder} "${program_names};${static_programs}" "${LAB_TEST_ENV}")
    # Wiring only the tests need (a fake library, a schema, extra test backends) lives
    # beside them, not in the lab's CMakeLists.txt.
    include(${PROJECT_SOURCE_DIR}/tests/${folder}/tests.cmake OPTIONAL)
  endif()
  if(GPULAB_BUILD_BENCH)
    _gpulab_add_lab_bench(${name} ${folder})
  endif()

  set_property(GLOBAL APPEND PROPERTY GPULAB_LAB_FOLDERS ${folder})
  set_property(GLOBAL PROPERTY GPULAB_LAB_${folder}_LIBRARY gpulab::${name})
  set_property(GLOBAL PROPERTY GPULAB_LAB_${folder}_PROGRAMS ${program_names})
  set_property(GLOBAL PROPERTY GPULAB_LAB_${folder}_NEEDS ${LAB_NEEDS})
  set_property(GLOBAL PROPERTY GPULAB_LAB_${folder}_SUMMARY "${LAB_SUMMARY}")
  string(REPLACE ";" "," programs_csv "${program_names}")
  gpulab_feature("lab ${folder}" ON "${programs_csv}")
endfunction()

# "prog" -> prog, main.cpp; "prog:path.cpp" -> prog, path.cpp (a PROGRAMS or STATIC_PROGRAMS entry).
function(_gpulab_program_spec spec out_prog out_main)
  string(REPLACE ":" ";" parts "${spec}")
  list(GET parts 0 prog)
  list(LENGTH parts n)
  if(n GREATER 1)
    list(GET parts 1 main_src)
  else()
    set(main_src main.cpp)
  endif()
  set(${out_prog} ${prog} PARENT_SCOPE)
  set(${out_main} ${main_src} PARENT_SCOPE)
endfunction()

# gpulab_lab_programs(prog...): programs a lab builds outside gpulab_add_lab() (an optional
# daemon, say) that `tools/lab list` must show too. Call it from the lab's CMakeLists.txt
# after gpulab_add_lab().
function(gpulab_lab_programs)
  get_filename_component(folder ${CMAKE_CURRENT_SOURCE_DIR} NAME)
  set_property(GLOBAL APPEND PROPERTY GPULAB_LAB_${folder}_PROGRAMS ${ARGN})
endfunction()

# Labs whose tests may still sit at the top of tests/<folder>/, labelled there by file name
# (*integration* -> integration, any other -> unit), beside the label folders. Only while
# files added on other branches land there; `tools/move-tests-by-label` moves them into
# unit/ and integration/ and takes the lab off this list. A test file at the top of any other
# lab's folder is a configure error.
set(GPULAB_TESTS_LABELLED_BY_FILE_NAME

)

# _gpulab_lab_test_sources(test_dir folder unit_out integration_out): the GoogleTest sources of
# a lab by label, from the folders tests/<folder>/unit/ and integration/ (and, for a lab on
# GPULAB_TESTS_LABELLED_BY_FILE_NAME, the files at the top by name). tests/cmake/test_folders_test.cmake.
function(_gpulab_lab_test_sources test_dir folder unit_out integration_out)
  set(recheck CONFIGURE_DEPENDS)  # a new file reconfigures; not in the test's `cmake -P`
  if(CMAKE_SCRIPT_MODE_FILE)
    set(recheck "")
  endif()
  file(GLOB unit_tests ${recheck} ${test_dir}/unit/*.cpp)
  file(GLOB integration_tests ${recheck} ${test_dir}/integration/*.cpp)
  file(GLOB top_tests ${recheck} ${test_dir}/*.cpp)
  if(top_tests AND NOT folder IN_LIST GPULAB_TESTS_LABELLED_BY_FILE_NAME)
    list(GET top_tests 0 first)
    get_filename_component(first ${first} NAME)
    message(FATAL_ERROR "tests/${folder}/${first}: a test file sits in the folder of its ctest "
      "label, tests/${folder}/unit/ or tests/${folder}/integration/ (tools/move-tests-by-label ${folder})")
  endif()
  foreach(src IN LISTS top_tests)
    get_filename_component(base ${src} NAME)
    if(base MATCHES "integration")
      list(APPEND integration_tests ${src})
    else()
      list(APPEND unit_tests ${src})
    endif()
  endforeach()
  set(${unit_out} "${unit_tests}" PARENT_SCOPE)
  set(${integration_out} "${integration_tests}" PARENT_SCOPE)
endfunction()

function(_gpulab_add_lab_tests name folder programs test_env)
  set(test_dir ${PROJECT_SOURCE_DIR}/tests/${folder})
  # Tests can read the lab's files (sample inputs) and run its programs.
  set(defs GPULAB_LAB_DIR="${CMAKE_CURRENT_SOURCE_DIR}"
           GPULAB_BIN_DIR="${CMAKE_RUNTIME_OUTPUT_DIRECTORY}")
  _gpulab_lab_test_sources(${test_dir} ${folder} unit_tests integration_tests)

  foreach(kind unit integration)
    if(NOT ${kind}_tests)
      continue()
    endif()
    if(kind STREQUAL "unit")
      set(exe test-${name})
    else()
      set(exe test-${name}-integration)
    endif()
    add_executable(${exe} ${${kind}_tests})
    target_link_libraries(${exe} PRIVATE gpulab::${name} GTest::gtest_main GTest::gmock)
    target_compile_definitions(${exe} PRIVATE ${defs})
    # gpulab_test/*.hpp, and the headers the lab's suites share (tests/<folder>/*.hpp)
    target_include_directories(${exe} PRIVATE ${PROJECT_SOURCE_DIR}/tests/support ${test_dir})
    gpulab_set_warnings(${exe})
    gpulab_use_pch(${exe} test)
    if(programs)
      add_dependencies(${exe} ${programs})   # integration tests run the programs
    endif()
    gtest_discover_tests(${exe}
      TEST_PREFIX "${name}."
      WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
      DISCOVERY_MODE PRE_TEST
      PROPERTIES LABELS ${kind} ENVIRONMENT "${test_env}")
  endforeach()

  file(GLOB root_tests CONFIGURE_DEPENDS ${test_dir}/root/*.cpp)
  if(root_tests AND NOT EXISTS ${test_dir}/root/main.cpp)
    set(exe test-${name}-root)
    add_executable(${exe} ${root_tests} ${PROJECT_SOURCE_DIR}/tests/support/gpulab_test/root_main.cpp)
    target_link_libraries(${exe} PRIVATE gpulab::${name} GTest::gtest GTest::gmock)
    target_compile_definitions(${exe} PRIVATE ${defs})
    target_include_directories(${exe} PRIVATE ${PROJECT_SOURCE_DIR}/tests/support ${test_dir})
    gpulab_set_warnings(${exe})
    gpulab_use_pch(${exe} test)
    if(programs)
      add_dependencies(${exe} ${programs})
    endif()
    gtest_discover_tests(${exe}
      TEST_PREFIX "${name}.root."
      WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
      DISCOVERY_MODE PRE_TEST
      PROPERTIES LABELS "root;integration" SKIP_RETURN_CODE 77 ENVIRONMENT "${test_env}")
  endif()

  if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/README.md)
    # --bench-built: a README block running a bench-* program that is missing fails here,
    # and skips only in presets that do not build benchmarks (asan, tsan).
    set(bench_flag "")
    if(GPULAB_BUILD_BENCH)
      set(bench_flag --bench-built)
    endif()
    add_test(NAME ${name}.readme
      COMMAND gpulab-readme-check ${CMAKE_CURRENT_SOURCE_DIR}/README.md
              --bin ${CMAKE_RUNTIME_OUTPUT_DIRECTORY}
              --cwd ${CMAKE_CURRENT_SOURCE_DIR} ${bench_flag})
    set_tests_properties(${name}.readme PROPERTIES
      LABELS readme SKIP_RETURN_CODE 77 ENVIRONMENT "${test_env}")
  endif()
endfunction()

function(_gpulab_add_lab_bench name folder)
  file(GLOB bench_srcs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/bench/${folder}/*.cpp)
  if(NOT bench_srcs)
    return()
  endif()
  add_executable(bench-${name} ${bench_srcs})
  target_link_libraries(bench-${name} PRIVATE gpulab::${name} benchmark::benchmark_main)
  gpulab_set_warnings(bench-${name})
  gpulab_use_pch(bench-${name} bench)
  gpulab_add_bench_smoke(${name}.bench-smoke bench-${name})
endfunction()

# build/<preset>/gpulab-labs.tsv: what `tools/lab list` prints.
# One line per lab, four tab-separated fields (any may be empty except the first):
#   folder  programs (comma-separated)  needs (comma-separated)  summary
function(gpulab_write_lab_index)
  get_property(folders GLOBAL PROPERTY GPULAB_LAB_FOLDERS)
  list(SORT folders)  # configured prerequisites first; listed by name
  set(text "")
  foreach(folder IN LISTS folders)
    get_property(programs GLOBAL PROPERTY GPULAB_LAB_${folder}_PROGRAMS)
    get_property(needs GLOBAL PROPERTY GPULAB_LAB_${folder}_NEEDS)
    get_property(summary GLOBAL PROPERTY GPULAB_LAB_${folder}_SUMMARY)
    string(REPLACE ";" "," programs "${programs}")
    string(REPLACE ";" "," needs "${needs}")
    string(APPEND text "${folder}\t${programs}\t${needs}\t${summary}\n")
  endforeach()
  file(WRITE ${PROJECT_BINARY_DIR}/gpulab-labs.tsv "${text}")
endfunction()

# gpulab_add_bench_smoke(test-name bench-target [ARGS "..."]): keeps a benchmark from rotting
# (the numbers come from running it by hand) and fails when any benchmark reports an error
# (SkipWithError), which Google Benchmark's exit status does not (GpulabBenchSmoke.cmake).
function(gpulab_add_bench_smoke test target)
  cmake_parse_arguments(PARSE_ARGV 2 SMOKE "" "ARGS" "")
  add_test(NAME ${test}
    COMMAND ${CMAKE_COMMAND} -DBENCH=$<TARGET_FILE:${target}> "-DARGS=${SMOKE_ARGS}"
            -P ${PROJECT_SOURCE_DIR}/cmake/GpulabBenchSmoke.cmake)
  set_tests_properties(${test} PROPERTIES LABELS bench
    SKIP_REGULAR_EXPRESSION "gpulab-bench-smoke: SKIPPED")
endfunction()
