// fakegpud: the fakegpu device served from user space through FUSE (libfuse3,
// low-level API). `fakegpud MOUNTDIR` mounts MOUNTDIR, whose file `fakegpu`
// takes the same open/ioctl/close system calls as the kernel module's
// /dev/fakegpu: the kernel's FUSE driver copies each ioctl argument in and out
// by its _IOC size and direction (a "restricted" ioctl), so EFAULT and ENOTTY
// come out as with the module. Each open() is a context (fi->fh). MOUNTDIR/stats
// is the module's sysfs stats attribute. SIGTERM/SIGINT unmount cleanly.
//
// What FUSE cannot do: share a page. mmap of the fence page (MAP_SHARED) fails
// with ENODEV (the file is opened direct_io), and INFO does not set
// FAKEGPU_INFO_F_FENCE_MMAP. Also, an ioctl whose copy-out fails (EFAULT
// after the daemon answered) cannot be rolled back here.
#define FUSE_USE_VERSION 35
#include <fmt/core.h>
#include <fuse_lowlevel.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "fakegpu/core_device.hpp"
#include "fakegpu/mount_point.hpp"
#include "gpulab/cli.hpp"

namespace {

constexpr fuse_ino_t kRootIno = FUSE_ROOT_ID;
constexpr fuse_ino_t kDeviceIno = 2;
constexpr fuse_ino_t kStatsIno = 3;
constexpr const char* kStatsName = "stats";

fakegpu::CoreDevice* g_core = nullptr;

struct stat attr_of(fuse_ino_t ino) {
  struct stat st {};
  st.st_ino = ino;
  st.st_uid = getuid();
  st.st_gid = getgid();
  if (ino == kRootIno) {
    st.st_mode = S_IFDIR | 0755;
    st.st_nlink = 2;
  } else if (ino == kDeviceIno) {
    st.st_mode = S_IFREG | 0666;  // the module's misc device is 0666 too
    st.st_nlink = 1;
  } else {
    st.st_mode = S_IFREG | 0444;
    st.st_nlink = 1;
  }
  return st;
}

void fg_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  fuse_entry_param e{};
  if (parent == kRootIno && std::strcmp(name, FAKEGPU_DEVICE_NAME) == 0) {
    e.ino = kDeviceIno;
  } else if (parent == kRootIno && std::strcmp(name, kStatsName) == 0) {
    e.ino = kStatsIno;
  } else {
    fuse_reply_err(req, ENOENT);
    return;
  }
  e.attr = attr_of(e.ino);
  e.attr_timeout = 1.0;
  e.entry_timeout = 1.0;
  fuse_reply_entry(req, &e);
}

void fg_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  if (ino != kRootIno && ino != kDeviceIno && ino != kStatsIno) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  const struct stat st = attr_of(ino);
  fuse_reply_attr(req, &st, 1.0);
}

void fg_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  if (ino != kRootIno) {
    fuse_reply_err(req, ENOTDIR);
    return;
  }
  struct Entry {
    const char* name;
    fuse_ino_t ino;
  };
  const Entry entries[] = {{".", kRootIno},
                           {"..", kRootIno},
                           {FAKEGPU_DEVICE_NAME, kDeviceIno},
                           {kStatsName, kStatsIno}};
  std::vector<char> buf(size);
  size_t used = 0;
  for (off_t i = off; i < static_cast<off_t>(std::size(entries)); ++i) {
    const struct stat st = attr_of(entries[i].ino);
    const size_t need =
        fuse_add_direntry(req, buf.data() + used, size - used, entries[i].name, &st, i + 1);
    if (need > size - used) break;
    used += need;
  }
  fuse_reply_buf(req, buf.data(), used);
}

void fg_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  if (ino == kStatsIno) {
    if ((fi->flags & O_ACCMODE) != O_RDONLY) {
      fuse_reply_err(req, EACCES);
      return;
    }
    fi->direct_io = 1;
    fi->fh = 0;
    fuse_reply_open(req, fi);
    return;
  }
  if (ino != kDeviceIno) {
    fuse_reply_err(req, EISDIR);
    return;
  }
  const std::uint64_t id = g_core->open();  // a context per open file, as the module's fakegpu_open
  if (id == 0) {
    fuse_reply_err(req, ENOMEM);
    return;
  }
  fi->fh = id;
  fi->direct_io = 1;  // no page cache: mmap(MAP_SHARED) is refused with ENODEV
  fi->nonseekable = 1;
  fuse_reply_open(req, fi);
}

void fg_release(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  if (ino == kDeviceIno) g_core->release(fi->fh);
  fuse_reply_err(req, 0);
}

void fg_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, fuse_file_info*) {
  if (ino != kStatsIno) {
    fuse_reply_err(req, EINVAL);  // the device has no read(); ioctl is its interface
    return;
  }
  const fg_stats s = g_core->stats();
  char text[512];
  const int n = fg_format_stats(&s, text, sizeof text);
  const auto len = static_cast<size_t>(n < 0 ? 0 : n);
  const auto start = static_cast<size_t>(off);
  if (start >= len) {
    fuse_reply_buf(req, nullptr, 0);
    return;
  }
  fuse_reply_buf(req, text + start, std::min(size, len - start));
}

void fg_interrupt(fuse_req_t, void* data) {
  static_cast<fakegpu::CoreDevice*>(data)->wake_all();
}

void fg_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void*, fuse_file_info* fi,
              unsigned flags, const void* in_buf, size_t in_bufsz, size_t out_bufsz) {
  if (ino != kDeviceIno) {
    fuse_reply_err(req, ENOTTY);
    return;
  }
  if ((flags & FUSE_IOCTL_COMPAT) != 0) {
    fuse_reply_err(req,
                   ENOSYS);  // 32-bit callers: the ABI is identical, but say so before claiming it
    return;
  }
  // validate: our five commands only; the kernel copied exactly _IOC_SIZE bytes in and will copy
  // them out.
  const long size = fg_cmd_size(cmd);
  if (size < 0) {
    fuse_reply_err(req, ENOTTY);
    return;
  }
  const auto n = static_cast<size_t>(size);
  const bool writes = (_IOC_DIR(cmd) & _IOC_WRITE) != 0;
  const bool reads = (_IOC_DIR(cmd) & _IOC_READ) != 0;
  if ((writes && in_bufsz != n) || (reads && out_bufsz != n)) {
    fuse_reply_err(req, EFAULT);
    return;
  }
  std::vector<unsigned char> buf(n, 0);
  if (writes) std::memcpy(buf.data(), in_buf, n);
  // act
  fuse_req_interrupt_func(req, fg_interrupt, g_core);
  const long rc =
      g_core->ioctl(fi->fh, cmd, buf.data(), [req] { return fuse_req_interrupted(req) != 0; });
  if (rc < 0) {
    fuse_reply_err(req, static_cast<int>(-rc));
    return;
  }
  fuse_reply_ioctl(req, 0, reads ? buf.data() : nullptr, reads ? n : 0);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "fakegpud: the fakegpu device in user space, served through FUSE.\n"
      "`fakegpud MOUNTDIR` makes MOUNTDIR/fakegpu take the module's open/ioctl ABI; SIGTERM "
      "unmounts.",
      "fakegpud"};
  std::string mountdir;
  bool foreground = false;
  std::uint64_t mem_total_mb = FG_DEFAULT_MEM_TOTAL_MB;
  std::uint64_t ctx_quota_mb = FG_DEFAULT_CTX_QUOTA_MB;
  std::uint32_t max_handles = FG_DEFAULT_MAX_HANDLES;
  bool debug = false;
  app.add_option("MOUNTDIR", mountdir, "an existing empty directory to mount on")->required();
  app.add_flag("-f,--foreground", foreground,
               "stay in the foreground (default: daemonize once mounted)");
  app.add_option("--mem-total-mb", mem_total_mb, "device pool (MiB)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--ctx-quota-mb", ctx_quota_mb, "per-fd quota (MiB), <= the pool")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--max-handles", max_handles, "buffers per fd")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
  app.add_flag("--debug", debug, "print every FUSE request (libfuse -d)");

  return gpulab::run_program("fakegpud", app, argc, argv, [&]() -> int {
    if (ctx_quota_mb > mem_total_mb)
      throw gpulab::UsageError("--ctx-quota-mb must not exceed --mem-total-mb");
    if (const auto problem = fakegpu::mountdir_problem(mountdir)) throw gpulab::UsageError(*problem);
    // fuse_daemonize() changes to "/" even in the foreground: unmounting later
    // needs the absolute path, or a relative MOUNTDIR stays mounted.
    mountdir = std::filesystem::canonical(mountdir).string();
    if (::access("/dev/fuse", R_OK | W_OK) != 0)
      throw gpulab::Unsupported("/dev/fuse is not available (no FUSE in this kernel or container)");

    fg_config cfg{};
    cfg.mem_total = mem_total_mb << 20;
    cfg.ctx_quota = ctx_quota_mb << 20;
    cfg.max_handles = max_handles;
    fakegpu::CoreDevice core(cfg);
    g_core = &core;

    fuse_lowlevel_ops ops{};
    ops.lookup = fg_lookup;
    ops.getattr = fg_getattr;
    ops.readdir = fg_readdir;
    ops.open = fg_open;
    ops.release = fg_release;
    ops.read = fg_read;
    ops.ioctl = fg_ioctl;

    std::vector<std::string> opts = {"fakegpud", "-o",
                                     "fsname=fakegpu,subtype=fakegpu,default_permissions"};
    if (geteuid() == 0)
      opts.back() += ",allow_other";  // containers and other users may open it, as /dev/fakegpu
    if (debug) opts.emplace_back("-d");
    std::vector<char*> cargv;
    for (auto& o : opts) cargv.push_back(o.data());
    fuse_args args = FUSE_ARGS_INIT(static_cast<int>(cargv.size()), cargv.data());
    struct ArgsGuard {  // fuse_session_new copies the argument vector; free it on every path
      fuse_args* a;
      ~ArgsGuard() { fuse_opt_free_args(a); }
    } args_guard{&args};

    fuse_session* se = fuse_session_new(&args, &ops, sizeof(ops), nullptr);
    if (se == nullptr) throw gpulab::RunError("fuse_session_new failed");
    if (fuse_set_signal_handlers(se) != 0) {
      fuse_session_destroy(se);
      throw gpulab::RunError("cannot install signal handlers");
    }
    if (fuse_session_mount(se, mountdir.c_str()) != 0) {
      fuse_remove_signal_handlers(se);
      fuse_session_destroy(se);
      throw gpulab::Unsupported("cannot mount FUSE on " + mountdir +
                                " (needs root or fusermount3)");
    }
    fmt::print("fakegpud: serving {}/{} ({} MiB pool, {} MiB per fd, {} handles)\n", mountdir,
               FAKEGPU_DEVICE_NAME, mem_total_mb, ctx_quota_mb, max_handles);
    std::fflush(stdout);
    fuse_daemonize(foreground ? 1 : 0);

    fuse_loop_config* loop = fuse_loop_cfg_create();
    fuse_loop_cfg_set_clone_fd(loop, 0);
    fuse_loop_cfg_set_max_threads(loop, 16);  // a blocked WAIT holds a thread; others keep serving
    const int rc = fuse_session_loop_mt(se, loop);
    fuse_loop_cfg_destroy(loop);
    fuse_session_unmount(se);
    fuse_remove_signal_handlers(se);
    fuse_session_destroy(se);
    g_core = nullptr;

    const fg_stats s = core.stats();
    if (s.contexts != 0 || s.buffers != 0)
      fmt::print(
          stderr,
          "fakegpud: warning: unmounted with {} contexts and {} buffers ({} bytes) still open\n",
          s.contexts, s.buffers, s.bytes_in_use);
    fmt::print(stderr, "fakegpud: unmounted {}\n", mountdir);
    // 0, -errno, or the number of the signal (SIGTERM/SIGINT/SIGHUP) that asked us to stop.
    if (rc < 0) throw gpulab::RunError(std::string("FUSE session failed: ") + std::strerror(-rc));
    return 0;
  });
}
