# Test-only wiring of p11-antitamper (included by gpulab_add_lab after the test targets exist).
# The hook the integration test preloads: a strcmp that says "equal" to everything.
if(TARGET test-antitamper-integration)
  add_library(tamperlab-hook MODULE ${CMAKE_CURRENT_LIST_DIR}/hook_strcmp.c)
  set_target_properties(tamperlab-hook PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_RUNTIME_OUTPUT_DIRECTORY} PREFIX "lib")
  target_compile_options(tamperlab-hook PRIVATE -fno-sanitize=all)
  target_link_options(tamperlab-hook PRIVATE -fno-sanitize=all)
  add_dependencies(test-antitamper-integration tamperlab-hook)
endif()
