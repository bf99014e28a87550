# Test-only wiring of p09-conformance (included by gpulab_add_lab after the test targets exist).
# The JUnit tests validate the XML against junit.xsd here with libxml2.
find_package(LibXml2)
if(NOT LibXml2_FOUND)
  message(FATAL_ERROR "p09-conformance tests need libxml2-dev (apt-get install libxml2-dev)")
endif()
foreach(_t test-conformance test-conformance-integration)
  target_link_libraries(${_t} PRIVATE LibXml2::LibXml2)
  target_compile_definitions(${_t} PRIVATE GPULAB_TEST_DIR="${CMAKE_CURRENT_LIST_DIR}")
endforeach()
