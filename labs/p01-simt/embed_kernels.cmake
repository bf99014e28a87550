# Writes embedded_kernels.hpp: every kernels/*.simt as a raw string, so the
# built-in report runs from anywhere while the files stay editable.
file(GLOB kernel_files ${KERNEL_DIR}/*.simt)
list(SORT kernel_files)
set(body "")
foreach(f IN LISTS kernel_files)
  get_filename_component(name ${f} NAME)
  file(READ ${f} text)
  string(APPEND body "    {\"${name}\", R\"simt(${text})simt\"},\n")
endforeach()
list(LENGTH kernel_files count)
file(WRITE ${OUTPUT}.tmp "// Generated from kernels/*.simt by embed_kernels.cmake. Do not edit.
#pragma once
#include <array>
#include <string_view>
#include <utility>
namespace simt {
inline constexpr std::array<std::pair<std::string_view, std::string_view>, ${count}> kEmbeddedKernels{{
${body}}};
}  // namespace simt
")
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.tmp)
