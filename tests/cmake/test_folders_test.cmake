# The folder of a lab's test file is its ctest label (cmake/GpulabLab.cmake,
# _gpulab_lab_test_sources), on a stand-in tests/ tree made here. ctest: cmake.test-folders
# (label unit); `cmake -P tests/cmake/test_folders_test.cmake` runs it by hand.
cmake_minimum_required(VERSION 3.25)
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/GpulabLab.cmake)

string(RANDOM LENGTH 8 _tag)
set(root "$ENV{TMPDIR}")
if(NOT root)
  set(root /tmp)
endif()
set(root "${root}/gpulab-test-folders-${_tag}")
function(touch)
  foreach(f IN LISTS ARGN)
    get_filename_component(d ${root}/${f} DIRECTORY)
    file(MAKE_DIRECTORY ${d})
    file(WRITE ${root}/${f} "")
  endforeach()
endfunction()
function(names out)
  set(n "")
  foreach(f IN LISTS ARGN)
    file(RELATIVE_PATH r ${root} ${f})
    list(APPEND n ${r})
  endforeach()
  list(SORT n)
  set(${out} "${n}" PARENT_SCOPE)
endfunction()
function(expect what got want)
  if(NOT "${got}" STREQUAL "${want}")
    file(REMOVE_RECURSE ${root})
    message(FATAL_ERROR "test_folders_test: FAIL: ${what}: got '${got}', want '${want}'")
  endif()
endfunction()

# A moved lab: the folder decides, whatever the name says; headers and fixtures are not tests.
touch(p90-moved/unit/a_test.cpp p90-moved/unit/named_integration_but_unit_test.cpp
      p90-moved/integration/cli_test.cpp p90-moved/root/r_test.cpp p90-moved/shared.hpp
      p90-moved/golden/x.cpp.txt)
_gpulab_lab_test_sources(${root}/p90-moved p90-moved unit integration)
names(unit ${unit})
names(integration ${integration})
expect("unit/ is unit" "${unit}" "p90-moved/unit/a_test.cpp;p90-moved/unit/named_integration_but_unit_test.cpp")
expect("integration/ is integration" "${integration}" "p90-moved/integration/cli_test.cpp")

# A lab still on the list: the top level by name, beside the folders.
set(GPULAB_TESTS_LABELLED_BY_FILE_NAME p91-listed)
touch(p91-listed/old_test.cpp p91-listed/old_integration_test.cpp p91-listed/unit/new_test.cpp
      p91-listed/integration/new_integration_test.cpp)
_gpulab_lab_test_sources(${root}/p91-listed p91-listed unit integration)
names(unit ${unit})
names(integration ${integration})
expect("listed lab, unit" "${unit}" "p91-listed/old_test.cpp;p91-listed/unit/new_test.cpp")
expect("listed lab, integration" "${integration}"
       "p91-listed/integration/new_integration_test.cpp;p91-listed/old_integration_test.cpp")

# A lab not on the list with a file at the top: the configure stops, naming it and the folders.
touch(p92-stray/unit/a_test.cpp p92-stray/stray_test.cpp)
file(WRITE ${root}/stray.cmake
  "cmake_minimum_required(VERSION 3.25)\ninclude(${CMAKE_CURRENT_LIST_DIR}/../../cmake/GpulabLab.cmake)\n"
  "_gpulab_lab_test_sources(${root}/p92-stray p92-stray u i)\n")
execute_process(COMMAND ${CMAKE_COMMAND} -P ${root}/stray.cmake RESULT_VARIABLE rc ERROR_VARIABLE err)
string(REGEX REPLACE "[ \n]+" " " err "${err}")
if(rc EQUAL 0 OR NOT err MATCHES "tests/p92-stray/stray_test.cpp: a test file sits in the folder of its ctest label, tests/p92-stray/unit/ or tests/p92-stray/integration/ \\(tools/move-tests-by-label p92-stray\\)")
  file(REMOVE_RECURSE ${root})
  message(FATAL_ERROR "test_folders_test: FAIL: a stray top-level test was not refused (status ${rc}): ${err}")
endif()

file(REMOVE_RECURSE ${root})
message(STATUS "test_folders_test: ok")
