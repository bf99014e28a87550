# Test-only wiring of p09-conformance (included by gpulab_add_lab after the test targets exist).
# The JUnit tests validate the XML against junit.xsd here with libxml2.
find_package(LibXml2)
if(NOT LibXml2_FOUND)
  # Not a configure error: `tools/lab run` of another lab installs only that lab's packages.
  # The suites are left unbuilt, and ctest reports each as a failing *_NOT_BUILT test, never
  # as passed or skipped; `tools/lab test` installs libxml2-dev.
  gpulab_feature("p09-conformance tests" OFF "need libxml2-dev (apt-get install libxml2-dev): not built")
  set_target_properties(test-conformance test-conformance-integration PROPERTIES EXCLUDE_FROM_ALL TRUE)
  return()
endif()
foreach(_t test-conformance test-conformance-integration)
  target_link_libraries(${_t} PRIVATE LibXml2::LibXml2)
  target_compile_definitions(${_t} PRIVATE GPULAB_TEST_DIR="${CMAKE_CURRENT_LIST_DIR}")
endforeach()
