#include "mininer/rootfs.hpp"

#include <elf.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>

#include "gpulab/errors.hpp"
#include "mininer/sys.hpp"

namespace mininer {
namespace {

std::string capture(const std::string& command) {
  std::string out;
  if (FILE* p = ::popen(command.c_str(), "r")) {
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    ::pclose(p);
  }
  return out;
}

void copy_file(const std::string& from, const std::string& to, mode_t mode) {
  std::ifstream in(from, std::ios::binary);
  if (!in) throw gpulab::RunError("cannot read " + from);
  const std::string tmp = to + ".mininer-tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw gpulab::RunError("cannot write " + tmp + ": " + errno_text(errno));
    out << in.rdbuf();
    if (!out.flush()) throw gpulab::RunError("cannot write " + tmp);
  }
  if (::chmod(tmp.c_str(), mode) != 0) throw_errno("chmod " + tmp);
  // rename over the old copy: a busy binary (a running container) is replaced, not rewritten.
  if (::rename(tmp.c_str(), to.c_str()) != 0) throw_errno("rename " + tmp);
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  if (!out) throw gpulab::RunError("cannot write " + path);
}

void replace_symlink(const std::string& target, const std::string& link) {
  ::unlink(link.c_str());
  if (::symlink(target.c_str(), link.c_str()) != 0) throw_errno("symlink " + link);
}

}  // namespace

std::optional<bool> elf_is_static(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr eh{};
  if (!in.read(reinterpret_cast<char*>(&eh), sizeof eh)) return std::nullopt;
  if (std::string_view(reinterpret_cast<const char*>(eh.e_ident), 4) !=
          "\x7f"
          "ELF" ||
      eh.e_ident[EI_CLASS] != ELFCLASS64)
    return std::nullopt;
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    in.seekg(static_cast<std::streamoff>(eh.e_phoff + i * eh.e_phentsize));
    if (!in.read(reinterpret_cast<char*>(&ph), sizeof ph)) return std::nullopt;
    if (ph.p_type == PT_INTERP) return false;
  }
  return true;
}

RootfsReport make_rootfs(const std::string& dir, const std::string& busybox) {
  RootfsReport r;
  r.busybox_path = busybox;
  if (r.busybox_path.empty())
    for (const char* p : {"/bin/busybox", "/usr/bin/busybox"})
      if (::access(p, X_OK) == 0) {
        r.busybox_path = p;
        break;
      }
  if (r.busybox_path.empty())
    throw gpulab::Unsupported("busybox not found: apt-get install busybox-static");
  const auto is_static = elf_is_static(r.busybox_path);
  if (!is_static) throw gpulab::UsageError(r.busybox_path + " is not an ELF executable");
  if (!*is_static)
    throw gpulab::Unsupported(r.busybox_path +
                              " is dynamically linked and needs the host's libc: "
                              "apt-get install busybox-static");
  if (dir.empty()) throw gpulab::UsageError("mkrootfs needs a directory");
  if (path_exists(dir) && !is_directory(dir))
    throw gpulab::UsageError("'" + dir + "' exists and is not a directory");

  try {
    make_dirs(dir);
    for (const char* d :
         {"bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev", "etc", "root", "var", "tmp"})
      make_dirs(dir + "/" + d);
    ::chmod((dir + "/tmp").c_str(), 01777);
    ::chmod((dir + "/root").c_str(), 0700);
  } catch (const SysError& e) {
    throw gpulab::UsageError(std::string("mkrootfs: ") + e.what());
  }

  copy_file(r.busybox_path, dir + "/bin/busybox", 0755);
  // "busybox --list-full" names every applet with its directory: bin/sh, usr/bin/env, ...
  std::istringstream list(capture("'" + r.busybox_path + "' --list-full"));
  for (std::string applet; std::getline(list, applet);) {
    if (applet.empty() || applet == "bin/busybox" || applet.find("..") != std::string::npos)
      continue;
    make_dirs(dirname_of(dir + "/" + applet));
    replace_symlink("/bin/busybox", dir + "/" + applet);
    ++r.applets;
  }
  if (r.applets == 0) throw gpulab::RunError(r.busybox_path + " --list-full listed no applets");
  const std::string banner = capture("'" + r.busybox_path + "' 2>&1 | head -n 1");
  static const std::regex version(R"(v(\d+\.\d+\.\d+))");
  if (std::smatch m; std::regex_search(banner, m, version)) r.busybox_version = m[1];

  write_text(dir + "/etc/passwd",
             "root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n");
  write_text(dir + "/etc/group", "root:x:0:\nnogroup:x:65534:\n");
  write_text(dir + "/etc/hosts", "127.0.0.1 localhost\n127.0.1.1 minibox\n");

  // /dev/null on disk as the lab asks; mininer run also mounts a fresh /dev over it.
  const std::string null_path = dir + "/dev/null";
  ::unlink(null_path.c_str());
  if (::mknod(null_path.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) {
    ::chmod(null_path.c_str(), 0666);
    r.extras.push_back("/dev/null");
  } else {
    r.notes.push_back("/dev/null not created (" + errno_text(errno) +
                      "; mknod needs root): mininer run mounts its own /dev");
  }

  // The OOM demo's hog, static, when it was built beside mininer.
  const std::string hog = self_dir() + "/hog";
  if (::access(hog.c_str(), X_OK) == 0) {
    if (elf_is_static(hog).value_or(false)) {
      copy_file(hog, dir + "/hog", 0755);
      replace_symlink("/hog", dir + "/bin/hog");
      r.extras.push_back("/hog");
    } else {
      r.notes.push_back(hog + " is dynamically linked; not copied (the rootfs has no libc)");
    }
  }
  return r;
}

}  // namespace mininer
