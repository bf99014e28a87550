// Where a function of one of our own ELF binaries starts in the file: the anti-tamper tests
// patch a byte there in a copy and expect the guard to notice.
#pragma once

#include <elf.h>

#include <cstddef>
#include <cstring>
#include <string>

namespace gpulab_test {

enum class SymbolMatch { kExact, kContains };

// File offset of the first defined function symbol whose name is `name` (kExact) or contains it
// (kContains: C++ names are mangled), from the symbol table; 0 when there is none.
inline std::size_t elf_function_file_offset(const std::string& img, const char* name,
                                            SymbolMatch match = SymbolMatch::kExact) {
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(img.data());
  const auto* sh = reinterpret_cast<const Elf64_Shdr*>(img.data() + eh->e_shoff);
  for (int i = 0; i < eh->e_shnum; ++i) {
    if (sh[i].sh_type != SHT_SYMTAB) continue;
    const Elf64_Shdr& strtab = sh[sh[i].sh_link];
    const auto* syms = reinterpret_cast<const Elf64_Sym*>(img.data() + sh[i].sh_offset);
    for (std::size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); ++k) {
      const char* sym_name = img.data() + strtab.sh_offset + syms[k].st_name;
      const bool named = match == SymbolMatch::kExact ? std::strcmp(sym_name, name) == 0
                                                      : std::strstr(sym_name, name) != nullptr;
      if (!named || ELF64_ST_TYPE(syms[k].st_info) != STT_FUNC || syms[k].st_shndx == SHN_UNDEF)
        continue;
      const Elf64_Shdr& sec = sh[syms[k].st_shndx];
      return sec.sh_offset + (syms[k].st_value - sec.sh_addr);
    }
  }
  return 0;
}

}  // namespace gpulab_test
