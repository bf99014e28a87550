# gpulab-ioctl-latency: the CO-RE BPF program (ioctl_latency.bpf.c) and its loader.
# Included by labs/p10-exporter/CMakeLists.txt after gpulab_add_lab(exporter ...).
#
#   vmlinux.h        bpftool btf dump file /sys/kernel/btf/vmlinux format c   (build time)
#   *.bpf.o          clang -target bpf -O2 -g, then `bpftool gen object` (drops DWARF, keeps BTF)
#   *.skel.h         bpftool gen skeleton: the object embedded, with open/load/attach functions
#
# Built only when clang, bpftool, libbpf and the build machine's BTF are all there; the
# configure summary says which is missing. CO-RE relocates field offsets at load time, so the
# object built from this kernel's BTF runs on any kernel that has BTF.

# The report side (tables, Prometheus text) is plain C++ and always part of the library.
target_sources(gpulab_exporter PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../src/ioctl_target.cpp
                                       ${CMAKE_CURRENT_LIST_DIR}/../src/ioctl_latency.cpp)
target_include_directories(gpulab_exporter PRIVATE ${CMAKE_CURRENT_LIST_DIR})  # ioctl_latency.h

set(_bpf_btf /sys/kernel/btf/vmlinux)
find_program(GPULAB_BPF_CLANG NAMES clang clang-16 clang-15 clang-14)
find_program(GPULAB_BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin)
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(LIBBPF QUIET IMPORTED_TARGET libbpf)
endif()
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(_bpf_arch x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(_bpf_arch arm64)
else()
  set(_bpf_arch "")
endif()

set(_bpf_missing "")
if(NOT GPULAB_BPF_CLANG)
  list(APPEND _bpf_missing "clang (apt-get install clang)")
endif()
if(NOT GPULAB_BPFTOOL)
  list(APPEND _bpf_missing "bpftool (apt-get install bpftool)")
endif()
if(NOT LIBBPF_FOUND)
  list(APPEND _bpf_missing "libbpf (apt-get install libbpf-dev)")
endif()
if(NOT EXISTS ${_bpf_btf})
  list(APPEND _bpf_missing "kernel BTF (${_bpf_btf}: CONFIG_DEBUG_INFO_BTF=y)")
endif()
if(NOT _bpf_arch)
  list(APPEND _bpf_missing "a known architecture (x86_64 or aarch64, not ${CMAKE_SYSTEM_PROCESSOR})")
endif()
if(_bpf_missing)
  string(REPLACE ";" ", " _bpf_missing "${_bpf_missing}")
  gpulab_feature("p10-exporter gpulab-ioctl-latency" OFF "eBPF probe not built: needs ${_bpf_missing}")
else()
  set(_bpf_src ${CMAKE_CURRENT_LIST_DIR}/ioctl_latency.bpf.c)
  set(_bpf_gen ${CMAKE_CURRENT_BINARY_DIR}/ebpf)
  set(_bpf_werror "")
  if(GPULAB_WERROR)
    set(_bpf_werror -Werror)
  endif()
  add_custom_command(OUTPUT ${_bpf_gen}/vmlinux.h
    COMMAND ${CMAKE_COMMAND} -E make_directory ${_bpf_gen}
    COMMAND sh -c "\"$0\" btf dump file \"$1\" format c > \"$2\"" ${GPULAB_BPFTOOL} ${_bpf_btf}
            ${_bpf_gen}/vmlinux.h.tmp
    COMMAND ${CMAKE_COMMAND} -E rename ${_bpf_gen}/vmlinux.h.tmp ${_bpf_gen}/vmlinux.h
    COMMENT "bpftool: vmlinux.h from ${_bpf_btf}"
    VERBATIM)
  add_custom_command(OUTPUT ${_bpf_gen}/ioctl_latency.skel.h
    COMMAND ${GPULAB_BPF_CLANG} -target bpf -O2 -g -D__TARGET_ARCH_${_bpf_arch} -Wall ${_bpf_werror}
            -I${_bpf_gen} -I${CMAKE_CURRENT_LIST_DIR} -c ${_bpf_src} -o ${_bpf_gen}/ioctl_latency.raw.o
    COMMAND ${GPULAB_BPFTOOL} gen object ${_bpf_gen}/ioctl_latency.bpf.o ${_bpf_gen}/ioctl_latency.raw.o
    COMMAND sh -c "\"$0\" gen skeleton \"$1\" name ioctl_latency_bpf > \"$2\"" ${GPULAB_BPFTOOL}
            ${_bpf_gen}/ioctl_latency.bpf.o ${_bpf_gen}/ioctl_latency.skel.h.tmp
    COMMAND ${CMAKE_COMMAND} -E rename ${_bpf_gen}/ioctl_latency.skel.h.tmp ${_bpf_gen}/ioctl_latency.skel.h
    DEPENDS ${_bpf_src} ${CMAKE_CURRENT_LIST_DIR}/ioctl_latency.h ${_bpf_gen}/vmlinux.h
    COMMENT "clang -target bpf + bpftool gen skeleton: ioctl_latency"
    VERBATIM)
  add_custom_target(ioctl-latency-skeleton DEPENDS ${_bpf_gen}/ioctl_latency.skel.h)

  add_executable(gpulab-ioctl-latency ${CMAKE_CURRENT_LIST_DIR}/../ioctl_latency_main.cpp
                                      ${CMAKE_CURRENT_LIST_DIR}/ioctl_latency_probe.cpp)
  add_dependencies(gpulab-ioctl-latency ioctl-latency-skeleton)
  target_include_directories(gpulab-ioctl-latency PRIVATE ${CMAKE_CURRENT_LIST_DIR})
  # The generated skeleton is C that bpftool writes; our warnings are not its business.
  target_include_directories(gpulab-ioctl-latency SYSTEM PRIVATE ${_bpf_gen})
  target_link_libraries(gpulab-ioctl-latency PRIVATE gpulab_exporter PkgConfig::LIBBPF)
  gpulab_set_warnings(gpulab-ioctl-latency)
  gpulab_lab_programs(gpulab-ioctl-latency)
  gpulab_feature("p10-exporter gpulab-ioctl-latency" ON
                 "eBPF probe: clang, bpftool, libbpf ${LIBBPF_VERSION}, BTF of ${CMAKE_HOST_SYSTEM_VERSION}")
endif()

# Its tests' wiring (the root test needs fakegpud and the probe built, and P04's ABI header).
include(${PROJECT_SOURCE_DIR}/tests/p10-exporter/ioctl_latency_tests.cmake OPTIONAL)
