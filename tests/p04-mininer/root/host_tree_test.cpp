// A container assembled from host paths, as gpulabd's agent builds one
// (p12-platform's task_container.cpp): a tmpfs root, merged-/usr links, the
// host's /usr read-only, one writable folder, a fresh /tmp, extra
// environment, its own IPC namespace and the standard device nodes allowed.
// Calls the library directly: these RunSpec fields have no mininer flag.
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gpulab/errors.hpp"
#include "mininer/container.hpp"

namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(HostTree, ATmpfsRootOfHostPathsWithEnvIpcAndAWritableFolder) {
  char tmpl[] = "/tmp/mininer-host-tree-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const fs::path dir = tmpl;
  fs::create_directories(dir / "root");
  fs::create_directories(dir / "out");

  mininer::RunSpec spec;
  spec.rootfs = (dir / "root").string();
  spec.rootfs_tmpfs = true;
  spec.hostname = "host-tree";
  for (const char* top : {"/bin", "/sbin", "/lib", "/lib64", "/usr"}) {
    std::error_code ec;
    if (fs::is_symlink(top, ec))
      spec.links.push_back({fs::read_symlink(top).string(), top});
    else if (fs::is_directory(top, ec))
      spec.binds.push_back({top, top, true});
  }
  spec.binds.push_back({(dir / "out").string(), "/out", false});
  spec.tmpfs = {"/tmp"};
  spec.env = {"GREETING=hello from the host", "HOME=/tmp"};
  spec.ipc = true;
  spec.device_cgroup = true;
  spec.allow_standard_devices = true;
  spec.inject_device_client = false;
  spec.argv = {"/bin/sh", "-c",
               "echo \"$GREETING $HOME\" > /out/env;"
               "if touch /usr/mininer-probe 2>/dev/null; then echo rw; else echo ro; fi > /out/usr;"
               "touch /tmp/scratch && echo ok > /out/tmp;"
               "readlink /proc/self/ns/ipc > /out/ipc;"
               "head -c 4 /dev/urandom | wc -c > /out/urandom;"
               "ls -A / | tr '\\n' ' ' > /out/root"};
  // This process is the runtime: named "mininer", so a concurrent mininer's
  // sweep of leftover groups sees its group as live (as gpulab-shim does).
  ::prctl(PR_SET_NAME, "mininer");
  const auto outcome = mininer::run_container(spec);
  EXPECT_EQ(outcome.exit_code(), 0);

  EXPECT_EQ(slurp(dir / "out" / "env"), "hello from the host /tmp\n");
  EXPECT_EQ(slurp(dir / "out" / "usr"), "ro\n");
  EXPECT_EQ(slurp(dir / "out" / "tmp"), "ok\n");
  EXPECT_NE(slurp(dir / "out" / "ipc"), fs::read_symlink("/proc/self/ns/ipc").string() + "\n");
  EXPECT_EQ(slurp(dir / "out" / "urandom"), "4\n");  // a standard node, allowed
  const std::string root = slurp(dir / "out" / "root");
  EXPECT_NE(root.find("usr "), std::string::npos) << root;
  EXPECT_EQ(root.find("home "), std::string::npos) << root;  // only what was asked for
  EXPECT_EQ(root.find("root "), std::string::npos) << root;
  // Nothing was written to the rootfs folder on disk: the tmpfs held it all.
  EXPECT_TRUE(fs::is_empty(dir / "root"));
  EXPECT_FALSE(fs::exists("/usr/mininer-probe"));
  fs::remove_all(dir);
}

TEST(HostTree, ABadBindOrEnvironmentEntryIsRefusedBeforeAnythingStarts) {
  mininer::RunSpec spec;
  spec.rootfs = "/tmp";
  spec.rootfs_tmpfs = true;
  spec.argv = {"/bin/true"};
  spec.binds = {{"/no/such/folder", "/x", true}};
  EXPECT_THROW(mininer::validate(spec), gpulab::UsageError);
  spec.binds = {{"/usr", "usr", true}};
  EXPECT_THROW(mininer::validate(spec), gpulab::UsageError);
  spec.binds = {};
  spec.env = {"=oops"};
  EXPECT_THROW(mininer::validate(spec), gpulab::UsageError);
}

}  // namespace
