# The order labs are configured in, and which are built. A lab names the labs
# it builds on in its gpulab_add_lab() call, the keyword on its own line:
#     LABS     p07-paged-kv p09-hal
# Reading those lines before any lab is configured lets us
#   - configure every prerequisite before the labs that use it (so each can
#     check that its prerequisites really configured, and link their library),
#   - bring a selected lab's prerequisites into the build: -DGPULAB_LABS=p12-platform
#     also builds the seven labs the platform composes.

# The LABS line of labs/<folder>/CMakeLists.txt, as a list of folders.
function(_gpulab_read_lab_needs dir out)
  file(STRINGS ${dir}/CMakeLists.txt lines REGEX "^[ \t]*LABS[ \t]")
  set(needs "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*LABS[ \t]+" "" line "${line}")
    string(REGEX REPLACE "\\).*$" "" line "${line}")      # the call may close on this line
    string(REGEX REPLACE "[ \t]+" ";" line "${line}")
    list(APPEND needs ${line})
  endforeach()
  list(REMOVE_ITEM needs "")
  set(${out} "${needs}" PARENT_SCOPE)
endfunction()

# gpulab_lab_order(<all lab dirs> <selected folders or empty> <out var>): the dirs
# to configure, prerequisites first, limited to the selection and what it needs.
function(gpulab_lab_order dirs selected out)
  set(folders "")
  foreach(dir IN LISTS dirs)
    if(NOT EXISTS ${dir}/CMakeLists.txt)
      continue()
    endif()
    get_filename_component(folder ${dir} NAME)
    list(APPEND folders ${folder})
    _gpulab_read_lab_needs(${dir} needs_${folder})
    foreach(need IN LISTS needs_${folder})
      if(NOT EXISTS ${PROJECT_SOURCE_DIR}/labs/${need}/CMakeLists.txt)
        message(FATAL_ERROR "labs/${folder}/CMakeLists.txt: LABS names '${need}', which is not a lab folder")
      endif()
    endforeach()
  endforeach()

  # The selection and, transitively, what it needs.
  if(selected)
    set(wanted "")
    set(todo ${selected})
    while(todo)
      list(POP_FRONT todo folder)
      if(folder IN_LIST wanted)
        continue()
      endif()
      if(NOT folder IN_LIST folders)
        message(FATAL_ERROR "GPULAB_LABS names '${folder}', which is not a lab folder under labs/")
      endif()
      list(APPEND wanted ${folder})
      list(APPEND todo ${needs_${folder}})
    endwhile()
  else()
    set(wanted ${folders})
  endif()

  # Depth-first, in name order: a lab comes after everything it needs.
  set(ordered "")
  set(visiting "")
  macro(_gpulab_visit folder)
    if(NOT "${folder}" IN_LIST ordered)
      if("${folder}" IN_LIST visiting)
        message(FATAL_ERROR "labs ${visiting} need each other in a cycle (their LABS lines)")
      endif()
      list(APPEND visiting ${folder})
      foreach(_need_${folder} IN LISTS needs_${folder})
        _gpulab_visit(${_need_${folder}})
      endforeach()
      list(REMOVE_ITEM visiting ${folder})
      list(APPEND ordered ${folder})
    endif()
  endmacro()
  foreach(folder IN LISTS folders)
    if(folder IN_LIST wanted)
      _gpulab_visit(${folder})
    endif()
  endforeach()

  set(result "")
  foreach(folder IN LISTS ordered)
    list(APPEND result ${PROJECT_SOURCE_DIR}/labs/${folder})
  endforeach()
  set(${out} "${result}" PARENT_SCOPE)
  foreach(folder IN LISTS folders)
    if(NOT folder IN_LIST wanted)
      gpulab_feature("lab ${folder}" OFF "not in GPULAB_LABS")
    elseif(selected AND NOT folder IN_LIST selected)
      message(STATUS "GPULAB_LABS: ${folder} added (a selected lab builds on it)")
    endif()
  endforeach()
endfunction()
