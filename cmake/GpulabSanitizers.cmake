# Sanitizers apply to everything built in the tree (labs, tests, benches), so a
# preset only sets GPULAB_SANITIZE.
if(GPULAB_SANITIZE)
  string(REPLACE ";" "," _gpulab_san "${GPULAB_SANITIZE}")
  add_compile_options(
    $<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=${_gpulab_san}>
    $<$<COMPILE_LANGUAGE:C,CXX>:-fno-omit-frame-pointer>
    $<$<COMPILE_LANGUAGE:C,CXX>:-fno-sanitize-recover=all>)
  add_link_options(-fsanitize=${_gpulab_san})
  gpulab_feature("sanitizers" ON "${GPULAB_SANITIZE}")
endif()
