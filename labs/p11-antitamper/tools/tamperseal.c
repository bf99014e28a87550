/* tamperseal: the build step of layer 1. Hashes the bytes of the
 * `tamper_text` section of a linked ELF64 binary and writes the SHA-256 into
 * its `tamper_seal` section, where at_verify_code_integrity() finds it. */
#include <elf.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "antitamper/integrity.h"

static int fail(const char* path, const char* why) {
  fprintf(stderr, "tamperseal: error: %s: %s\n", path, why);
  return 2;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: tamperseal BINARY\n");
    return 2;
  }
  const char* path = argv[1];
  FILE* f = fopen(path, "r+b");
  if (!f) return fail(path, "cannot open for update");
  if (fseek(f, 0, SEEK_END) != 0) return fclose(f), fail(path, "cannot seek");
  const long size = ftell(f);
  if (size < (long)sizeof(Elf64_Ehdr) || size > (256L << 20)) return fclose(f), fail(path, "not a plausible binary size");
  unsigned char* img = malloc((size_t)size);
  rewind(f);
  if (!img || fread(img, 1, (size_t)size, f) != (size_t)size) return free(img), fclose(f), fail(path, "read failed");

  const Elf64_Ehdr* eh = (const Elf64_Ehdr*)img;
  const size_t usize = (size_t)size;
  if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
      eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > usize ||
      (usize - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum || eh->e_shstrndx >= eh->e_shnum) {
    return free(img), fclose(f), fail(path, "not an ELF64 file with section headers");
  }
  const Elf64_Shdr* sh = (const Elf64_Shdr*)(img + eh->e_shoff);
  const Elf64_Shdr* strtab = &sh[eh->e_shstrndx];
  const Elf64_Shdr *text = NULL, *seal = NULL;
  for (unsigned i = 0; i < eh->e_shnum; ++i) {
    if (sh[i].sh_name >= strtab->sh_size || strtab->sh_offset + strtab->sh_size > usize) continue;
    const char* name = (const char*)img + strtab->sh_offset + sh[i].sh_name;
    const size_t room = strtab->sh_size - sh[i].sh_name;
    if (strnlen(name, room) == room) continue;
    if (strcmp(name, "tamper_text") == 0) text = &sh[i];
    if (strcmp(name, "tamper_seal") == 0) seal = &sh[i];
  }
  if (!text || !seal) return free(img), fclose(f), fail(path, "no tamper_text/tamper_seal sections (not built with antitamper)");
  if (text->sh_offset + text->sh_size > usize || seal->sh_offset + sizeof(struct at_seal) > usize ||
      seal->sh_size < sizeof(struct at_seal)) {
    return free(img), fclose(f), fail(path, "section outside the file");
  }
  struct at_seal s;
  memcpy(&s, img + seal->sh_offset, sizeof s);
  if (strncmp(s.magic, AT_SEAL_MAGIC, sizeof s.magic) != 0) return free(img), fclose(f), fail(path, "seal magic not found");
  unsigned int len = 0;
  if (EVP_Digest(img + text->sh_offset, text->sh_size, s.sha256, &len, EVP_sha256(), NULL) != 1) {
    return free(img), fclose(f), fail(path, "SHA-256 failed");
  }
  s.size = text->sh_size;
  if (fseek(f, (long)seal->sh_offset, SEEK_SET) != 0 || fwrite(&s, sizeof s, 1, f) != 1 || fclose(f) != 0) {
    free(img);
    return fail(path, "cannot write the seal");
  }
  printf("tamperseal: sealed %s: %llu bytes of tamper_text, sha256 ", path, (unsigned long long)s.size);
  for (int i = 0; i < 8; ++i) printf("%02x", s.sha256[i]);
  printf("...\n");
  free(img);
  return 0;
}
