# What `cmake --install` and the Debian packages (`tools/lab package`, CPack) hold: the one
# place install rules live, so a new lab's programs are packaged without touching this file.
#
#   gpulab-hal       the HAL backend modules, /opt/gpulab/lib/hal-backends (found by every
#                    program at <its bin>/../lib/hal-backends; hal::build_backend_dir())
#   gpulab-labs      every program of the lab index (build/<preset>/gpulab-labs.tsv) that is not
#                    the platform's, plus the helpers a program finds beside itself (mininer's
#                    hog and mininer-static, fakegpu's static tools)
#   gpulab-platform  p12-platform's programs, and gpulab-serve (p12-serving), which the agent
#                    starts beside gpulabd for serve jobs; the systemd units of the control
#                    plane and the agent (deploy/systemd/) and their settings under /etc/gpulab
#
# Programs go to /opt/gpulab/bin with a link in /usr/bin: a program finds its backends and its
# helpers relative to /proc/self/exe, which resolves the link, so the tree stays together.
# Runtime library dependencies are computed by dpkg-shlibdeps (CPACK_DEBIAN_PACKAGE_SHLIBDEPS),
# never written by hand; only programs a program runs (not links) are named below.
# Call gpulab_install_rules() once, after every lab is configured (top-level CMakeLists.txt).

set(GPULAB_INSTALL_ROOT /opt/gpulab)
# cpack installs what is built; `tools/lab package` builds first. Without this, cpack (and the
# package test that runs it) would start building the whole tree behind the caller's back.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

# _gpulab_links_cuda(target out): whether target links NVIDIA's CUDA libraries (CUDA::*),
# directly or through the libraries it links.
function(_gpulab_links_cuda target out)
  set(${out} OFF PARENT_SCOPE)
  set(queue ${target})
  set(seen "")
  while(queue)
    list(POP_FRONT queue t)
    if(t IN_LIST seen OR NOT TARGET ${t})
      continue()
    endif()
    list(APPEND seen ${t})
    if(t MATCHES "^CUDA::")
      set(${out} ON PARENT_SCOPE)
      return()
    endif()
    get_target_property(aliased ${t} ALIASED_TARGET)
    if(aliased)
      list(APPEND queue ${aliased})
      continue()
    endif()
    get_target_property(type ${t} TYPE)
    set(libs "")
    if(NOT type STREQUAL "INTERFACE_LIBRARY")
      get_target_property(libs ${t} LINK_LIBRARIES)
    endif()
    get_target_property(ilibs ${t} INTERFACE_LINK_LIBRARIES)
    foreach(lib IN LISTS libs ilibs)
      if(lib AND NOT lib MATCHES "NOTFOUND$")
        list(APPEND queue ${lib})
      endif()
    endforeach()
  endwhile()
endfunction()

# Everything the packages hold: `tools/lab package` builds this target, not the whole tree
# (tests and benchmarks are most of it).
add_custom_target(gpulab-package-contents)

# install() for one program into COMPONENT, with its /usr/bin link unless NO_LINK (a helper
# other programs run, which has no business on PATH under a name like `hog`). A program that links
# NVIDIA's CUDA runtime goes to the `cuda` component instead, which no package holds
# (see _gpulab_cpack).
function(_gpulab_install_program target component)
  cmake_parse_arguments(PARSE_ARGV 2 ARG "NO_LINK" "" "")
  _gpulab_links_cuda(${target} cuda)
  if(cuda)
    set(component cuda)
  endif()
  install(TARGETS ${target} RUNTIME DESTINATION bin COMPONENT ${component})
  add_dependencies(gpulab-package-contents ${target})
  if(ARG_NO_LINK)
    return()
  endif()
  set(link ${PROJECT_BINARY_DIR}/package-links/${target})
  file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/package-links)
  file(CREATE_LINK ${GPULAB_INSTALL_ROOT}/bin/${target} ${link} SYMBOLIC)
  install(FILES ${link} DESTINATION /usr/bin COMPONENT ${component})
endfunction()

function(gpulab_install_rules)
  get_property(folders GLOBAL PROPERTY GPULAB_LAB_FOLDERS)
  set(platform_programs "")
  set(lab_programs "")
  foreach(folder IN LISTS folders)
    get_property(programs GLOBAL PROPERTY GPULAB_LAB_${folder}_PROGRAMS)
    if(folder STREQUAL "p12-platform")
      list(APPEND platform_programs ${programs})
    else()
      list(APPEND lab_programs ${programs})
    endif()
  endforeach()
  # The agent runs gpulab-serve for serve jobs, so it travels with the platform.
  if("gpulab-serve" IN_LIST lab_programs AND platform_programs)
    list(REMOVE_ITEM lab_programs gpulab-serve)
    list(APPEND platform_programs gpulab-serve)
  endif()
  foreach(prog IN LISTS lab_programs)
    _gpulab_install_program(${prog} labs)
  endforeach()
  # Helpers found beside a program at run time, not in the lab index: mininer mkrootfs copies
  # hog and mininer-static, fakegpu's VM and containers take its static tools.
  foreach(helper hog mininer-static fakegpu-client-static fakegpu-evil-static fakegpu-bench-static)
    if(TARGET ${helper})
      _gpulab_install_program(${helper} labs NO_LINK)
    endif()
  endforeach()
  foreach(prog IN LISTS platform_programs)
    _gpulab_install_program(${prog} platform)
  endforeach()

  # The backends default discovery finds: p09-hal's modules in its backend directory (the
  # test-only ones, built into hal-test-backends, stay out).
  set(hal_dir ${PROJECT_SOURCE_DIR}/labs/p09-hal)
  set(hal_targets "")
  if(TARGET gpulab_hal)
    get_property(hal_targets DIRECTORY ${hal_dir} PROPERTY BUILDSYSTEM_TARGETS)
    get_directory_property(backend_dir DIRECTORY ${hal_dir} DEFINITION GPULAB_HAL_BACKEND_DIR)
  endif()
  foreach(target IN LISTS hal_targets)
    get_target_property(type ${target} TYPE)
    get_target_property(dir ${target} LIBRARY_OUTPUT_DIRECTORY)
    if(type STREQUAL "MODULE_LIBRARY" AND dir STREQUAL backend_dir)
      _gpulab_links_cuda(${target} cuda)
      add_dependencies(gpulab-package-contents ${target})
      if(cuda)
        install(TARGETS ${target} LIBRARY DESTINATION lib/hal-backends COMPONENT cuda)
      else()
        install(TARGETS ${target} LIBRARY DESTINATION lib/hal-backends COMPONENT hal)
      endif()
    endif()
  endforeach()

  if(platform_programs)
    set(units ${PROJECT_SOURCE_DIR}/deploy/systemd)
    install(FILES ${units}/gpulabd.service ${units}/gpulab-agent.service
            DESTINATION /lib/systemd/system COMPONENT platform)
    install(FILES ${units}/gpulabd.env ${units}/gpulab-agent.env
            DESTINATION /etc/gpulab COMPONENT platform)
  endif()
  _gpulab_cpack("${lab_programs}" "${platform_programs}")
endfunction()

function(_gpulab_cpack lab_programs platform_programs)
  set(CPACK_GENERATOR DEB)
  set(CPACK_PACKAGE_NAME gpulab)
  set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})   # project(VERSION), as --version prints
  set(CPACK_PACKAGE_VENDOR "gpulab")
  set(CPACK_PACKAGE_CONTACT "gpulab maintainers <gpulab@localhost>")
  set(CPACK_PACKAGING_INSTALL_PREFIX ${GPULAB_INSTALL_ROOT})
  set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/packages)

  set(CPACK_DEB_COMPONENT_INSTALL ON)
  set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)          # gpulab-labs_0.1.0_amd64.deb
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  # Debug information stays in the build tree (RelWithDebInfo): stripped, the packages are a
  # fraction of the size. tamperlab's seal covers its code, which strip leaves alone (the
  # package test runs its integrity check).
  set(CPACK_STRIP_FILES ON)
  set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)    # labs/platform -> gpulab-hal (= version)
  set(CPACK_DEBIAN_PACKAGE_SECTION misc)
  # Not the `cuda` component (the CUDA programs and the cuda backend, when nvcc and the toolkit
  # were found): their runtime is NVIDIA's (/usr/local/cuda), which no Debian package provides,
  # so dpkg-shlibdeps cannot compute their dependencies. `cmake --install` installs them.
  set(CPACK_COMPONENTS_ALL hal)
  # A package's description: its synopsis, then the long text (CPack indents it). Empty, the
  # summary CPack would otherwise put above every package's synopsis (the project's).
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "")
  set(CPACK_DEBIAN_HAL_DESCRIPTION "gpulab HAL backends (cpu_ref, fast, blas, opencl)
The dlopen'd backends of gpulab's hardware abstraction layer, which the lab
programs and the platform's agent load from /opt/gpulab/lib/hal-backends.")
  # opencl's kernels need an OpenCL implementation; the ICD loader alone finds no device.
  set(CPACK_DEBIAN_HAL_PACKAGE_RECOMMENDS "pocl-opencl-icd")
  if(lab_programs)
    list(APPEND CPACK_COMPONENTS_ALL labs)
    set(CPACK_COMPONENT_LABS_DEPENDS hal)
    set(CPACK_DEBIAN_LABS_DESCRIPTION "gpulab lab programs
Every program of the gpulab labs (membench, simt-sim, cluster-sim, hal-demo,
...), in /opt/gpulab/bin with links in /usr/bin.")
    # Programs the labs run rather than link: mininer's rootfs and --net, fakegpud's mount,
    # --plot pictures, the MPI bootstrap.
    set(CPACK_DEBIAN_LABS_PACKAGE_RECOMMENDS "busybox-static, iproute2, fuse3, gnuplot-nox")
    set(CPACK_DEBIAN_LABS_PACKAGE_SUGGESTS "openmpi-bin, prometheus")
  endif()
  if(platform_programs)
    list(APPEND CPACK_COMPONENTS_ALL platform)
    set(CPACK_COMPONENT_PLATFORM_DEPENDS hal)
    set(CPACK_DEBIAN_PLATFORM_DESCRIPTION "gpulab platform: control plane, node agent, tasks
gpulabd (the control plane and the node agent, with the systemd units
gpulabd.service and gpulab-agent.service, settings in /etc/gpulab), gpulabctl,
gpulab-task, gpulab-shim and gpulab-serve.")
    # The settings files are the operator's: dpkg keeps their edits across upgrades.
    set(CPACK_DEBIAN_PLATFORM_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/deploy/systemd/conffiles)
  endif()
  include(CPack)
endfunction()
