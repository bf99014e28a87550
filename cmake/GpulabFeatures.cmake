# A one-screen summary printed at the end of configure: every optional lab or
# feature, whether it is on, and why not. Labs call gpulab_feature().
define_property(GLOBAL PROPERTY GPULAB_FEATURES
  BRIEF_DOCS "gpulab features" FULL_DOCS "name|ON/OFF|reason entries")

function(gpulab_feature name state reason)
  if(state)
    set(state ON)
  else()
    set(state OFF)
  endif()
  string(REPLACE ";" "," reason "${reason}")  # a list in the reason would split the entry
  set_property(GLOBAL APPEND PROPERTY GPULAB_FEATURES "${name}|${state}|${reason}")
endfunction()

function(gpulab_print_feature_summary)
  get_property(entries GLOBAL PROPERTY GPULAB_FEATURES)
  message(STATUS "")
  message(STATUS "gpulab configuration summary")
  foreach(entry IN LISTS entries)
    string(REPLACE "|" ";" parts "${entry}")
    list(GET parts 0 name)
    list(GET parts 1 state)
    list(GET parts 2 reason)
    string(LENGTH "${name}" len)
    math(EXPR pad "34 - ${len}")
    if(pad LESS 1)
      set(pad 1)
    endif()
    string(REPEAT " " ${pad} spaces)
    message(STATUS "  ${name}${spaces}${state}  ${reason}")
  endforeach()
  message(STATUS "")
endfunction()
