function(gpulab_set_warnings target)
  set(flags -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion)
  if(GPULAB_WERROR)
    list(APPEND flags -Werror)
  endif()
  # Only C and C++ sources get these; nvcc has its own flag spelling.
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${flags}>
    $<$<COMPILE_LANGUAGE:C>:${flags}>)
endfunction()
